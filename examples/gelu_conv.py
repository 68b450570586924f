"""conv -> GELU -> nearest upsample on a channels-last input (issue 9, item 1): its output on the target
is channels-last, so the bundle's expected output must carry that dim order or the runner's bundle
check aborts ("The two inputs of tensors_are_close function shall have same strides")."""
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
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    return (x.to(memory_format=torch.channels_last),)
