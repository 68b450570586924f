"""A residual add of a channels-last tensor and a window reverse's output (timm EfficientViT's
LocalWindowAttention: `x[:, :H, :W].contiguous().permute(0, 3, 1, 2)`). In the float export both
operands are channels-last in memory; to_edge makes the permute a copy with a contiguous output, and
ExecuTorch 1.5.1 rewrites the add into cortex_m::quantized_add on one channels-last and one contiguous
operand. The kernel adds the two buffers element by element (its dim-order check is a TODO,
cortex_m_ops_common.h:72), and so does its cortex_m::transpose of the channels-last conv output: no
error, wrong values. `near`: the same permutes made on an NCHW copy and the result turned back to
channels-last (what --keep-going does): every kernel sees the layout it assumes."""
import torch
from torch import nn


class MixedLayoutAdd(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.mix = nn.Conv2d(8, 8, 1)

    def branch(self, x: torch.Tensor) -> torch.Tensor:
        y = self.mix(x).permute(0, 2, 3, 1)                 # NHWC, as a window partition leaves it
        return y.contiguous().permute(0, 3, 1, 2)           # window reverse: NCHW view of NHWC memory

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        return x + self.branch(x)


class LayoutsMatched(MixedLayoutAdd):
    def branch(self, x: torch.Tensor) -> torch.Tensor:
        y = self.mix(x).contiguous().permute(0, 2, 3, 1)
        return y.contiguous().permute(0, 3, 1, 2).clone(memory_format=torch.channels_last)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return MixedLayoutAdd().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 6, 6).to(memory_format=torch.channels_last),)


def near() -> tuple:
    torch.manual_seed(0)
    return LayoutsMatched().eval(), get_example_inputs()
