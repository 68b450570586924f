"""`feat.view(B, -1, H, W)` of a channels-last conv output (timm EfficientViT's cascaded group attention),
then a channels-last copy. to_executorch makes the view a memory view of the conv's NHWC buffer with
contiguous strides (ReplaceViewCopyWithViewPass): the copy reads NHWC bytes as NCHW, no error, wrong values.
`near`: `.contiguous()` before the view, so the view's base is NCHW: PASS."""
import torch
from torch import nn


class ViewOfChannelsLast(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1)
        self.head = nn.Conv2d(8, 8, 1)

    def base(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        B, C, H, W = y.shape
        return self.head(y.view(B, -1, H, W).clone(memory_format=torch.channels_last))


class ViewOfContiguous(ViewOfChannelsLast):
    def base(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x).contiguous()


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return ViewOfChannelsLast().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 4, 4).to(memory_format=torch.channels_last),)


def near() -> tuple:
    torch.manual_seed(0)
    return ViewOfContiguous().eval(), get_example_inputs()
