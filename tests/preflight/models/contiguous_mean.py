"""conv -> relu -> .contiguous() -> mean over H, W, channels-last input. The mean lowers to
cortex_m::quantized_avg_pool2d on the contiguous copy: on QEMU M55 the runner stopped with
"quantized_avg_pool2d_out: tensors must use channels_last dimension order" (status 0x12)."""
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return y.contiguous().mean(dim=(2, 3))


def get_model():
    torch.manual_seed(0)
    return M().eval().to(memory_format=torch.channels_last)


def get_example_inputs():
    torch.manual_seed(1)
    return (torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last),)


class NoContiguous(M):
    """The near miss: the mean reads the channels-last conv output directly (no `.contiguous()`)."""

    def forward(self, x):
        return torch.relu(self.conv(x)).mean(dim=(2, 3))


def no_contiguous():
    torch.manual_seed(0)
    return NoContiguous().eval().to(memory_format=torch.channels_last), get_example_inputs()
