"""A quantized conv, then a conv with padding="same" and an even kernel, channels-last input (braindecode's
EEGInceptionERP, issue 46). The quantizer has no pattern for conv2d.padding, so that conv stays in float, and
torch.export writes its asymmetric "same" padding as an aten.constant_pad_nd on the dequantized NHWC tensor.
The portable pad kernel (op_constant_pad_nd.cpp:204) takes its strides from the logical sizes: on QEMU M55 the
run completes without an error and the outputs are scrambled (BundleIO FAIL). `contiguous`: the pad's input
made contiguous first (ExecuTorch inserts a dim-order copy): PASS."""
import torch
from torch import nn


class PadChannelsLast(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 8, (1, 3), padding=(0, 1))
        self.same = nn.Conv2d(8, 4, (1, 4), padding="same")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.same(self.conv(x))


class PadContiguous(PadChannelsLast):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.same(self.conv(x).contiguous())


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return PadChannelsLast().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 4, 1, 16).to(memory_format=torch.channels_last),)


def contiguous() -> tuple:
    torch.manual_seed(0)
    return PadContiguous().eval(), get_example_inputs()
