"""`y.max(dim=1)[0]` (SINet's attention, pytorchcv): ExecuTorch 1.5.1's RemoveGetItemPass turns max.dim into
aten.amax with `dim=1`, a bare int for amax's `int[1] dim`; the program stores an Int where the kernel's
argument is an int list, and the runtime aborts in EValue::toIntList ("EValue is not an Int List").
`near`: the same reduction written as amax over [1], stored as an int list: runs."""
import torch
from torch import nn


class MaxOverChannels(nn.Module):
    def __init__(self, as_list: bool = False) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.as_list = as_list

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.softmax(self.conv(x), dim=1)
        return torch.amax(y, dim=[1]) if self.as_list else y.max(dim=1)[0]


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return MaxOverChannels().eval()


def get_example_inputs() -> tuple:
    return (torch.randn(1, 3, 4, 4, generator=torch.Generator().manual_seed(1)),)


def near() -> tuple:
    torch.manual_seed(0)
    return MaxOverChannels(as_list=True).eval(), get_example_inputs()
