"""ConvTranspose2d(stride=2, padding=1): lowered to cortex_m.quantized_transpose_conv2d (CMSIS-NN), whose
outputs were up to 255 quantization steps off on QEMU M55 in ExecuTorch's own test cases."""
import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1).eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 4, 4, 4).to(memory_format=torch.channels_last),)
