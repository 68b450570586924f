"""A 3-D convolution: not lowered to CMSIS-NN, so it runs on the portable conv kernel, which accepts
only 3-D or 4-D inputs (kernel_ops_util.cpp:394; found by ExecuTorch's own test case
ops.test_conv:conv3d crashing on QEMU M55 with "Expect input tensor to be 3-D or 4-D, but got, 5")."""
import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Conv3d(2, 4, 3, padding=1).eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 2, 4, 6, 6),)
