"""timm EfficientViT's window partition: `x.view(B, nH, ws, nW, ws, C).transpose(2, 3)` of a quantized
tensor. ExecuTorch 1.5.1 rewrites the 6-D transpose into cortex_m::transpose, whose kernel takes at most
4 dims: on QEMU M55 the method fails ("transpose_out: expected tensor rank in [1, 4], got 6",
op_transpose.cpp:44). `near`: the same permutation on the 4-D view that merges the dims that stay
together ([B*nH, ws, nW, ws*C], dims 1 and 2 swapped), what --keep-going writes: PASS."""
import torch
from torch import nn

WS = 2


class WindowPartition(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 8, 1)

    def partition(self, x: torch.Tensor, B: int, nH: int, nW: int, C: int) -> torch.Tensor:
        return x.view(B, nH, WS, nW, WS, C).transpose(2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x).contiguous().permute(0, 2, 3, 1).contiguous()    # B, H, W, C
        B, H, W, C = x.shape
        nH, nW = H // WS, W // WS
        x = self.partition(x, B, nH, nW, C).reshape(B * nH * nW, WS, WS, C)
        return self.head(x.permute(0, 3, 1, 2).clone(memory_format=torch.channels_last))


class FourDims(WindowPartition):
    def partition(self, x: torch.Tensor, B: int, nH: int, nW: int, C: int) -> torch.Tensor:
        return x.reshape(B * nH, WS, nW, WS * C).transpose(1, 2)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return WindowPartition().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 4, 4).to(memory_format=torch.channels_last),)


def near() -> tuple:
    torch.manual_seed(0)
    return FourDims().eval(), get_example_inputs()
