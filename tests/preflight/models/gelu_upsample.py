"""Crash model 1 of issue 9: conv -> GELU -> nearest upsample, channels-last input.

On QEMU M55 its output is channels-last; with contiguous bundled expected outputs the runner's
bundle check aborted on mismatched strides."""
import torch
from torch import nn


class GeluUpsample(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.act = nn.GELU()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(self.act(self.conv(x)))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return GeluUpsample().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last),)
