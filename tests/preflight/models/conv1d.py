"""The near miss of the rank rule: a 1-D convolution whose 3-D input the portable conv kernel accepts
(kernel_ops_util.cpp:394 allows 3-D or 4-D)."""
import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Conv1d(2, 4, 3, padding=1).eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 2, 16),)
