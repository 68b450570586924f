"""Crash model 2 of issue 9: conv -> sigmoid gate -> cat -> exp -> softmax(dim=1).

Input channels-last (as the legacy flow lowered every 4-D input then). On QEMU M55 the portable softmax kernel failed
`tensors_have_same_dim_order(in, out)`
(op_softmax.cpp) and the method returned status 0x12."""
import torch
from torch import nn


class GateCatSoftmax(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        g = y * torch.sigmoid(y)
        z = torch.cat([y, g], dim=1)
        return torch.softmax(torch.exp(z), dim=1)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return GateCatSoftmax().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last),)


class GateCatSoftmaxFixed(GateCatSoftmax):
    """The fix the findings suggest: contiguous tensors into the cat (the portable cat kernel ignores dim
    order, op_cat.cpp:54), so cat, exp and softmax all see one layout."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        g = y * torch.sigmoid(y)
        z = torch.cat([y.contiguous(), g.contiguous()], dim=1)
        return torch.softmax(torch.exp(z), dim=1)


def fixed() -> tuple:
    torch.manual_seed(0)
    return GateCatSoftmaxFixed().eval(), get_example_inputs()
