"""conv -> sigmoid gate -> cat along channels, channels-last input. The portable cat kernel
(op_cat.cpp:54) copies each input's buffer by the logical sizes and ignores the dim order: on QEMU M55
the run completes without an error and the outputs are scrambled (BundleIO FAIL). `fixed`: the inputs
made contiguous first (ExecuTorch inserts dim-order copies): PASS."""
import torch
from torch import nn


class CatChannelsLast(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        return torch.cat([y, y * torch.sigmoid(y)], dim=1)


class CatContiguous(CatChannelsLast):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        return torch.cat([y.contiguous(), (y * torch.sigmoid(y)).contiguous()], dim=1)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return CatChannelsLast().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last),)


def fixed() -> tuple:
    torch.manual_seed(0)
    return CatContiguous().eval(), get_example_inputs()
