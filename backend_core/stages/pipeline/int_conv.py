"""Host reference of dilated integer convolutions. ExecuTorch's Python reference of the cortex_m conv
kernels (cortex_m/ops/operators.py) accumulates in int32 with torch.nn.functional.conv2d, and torch has
no integer kernel for a dilated convolution ("slow_conv_dilated<>" not implemented for 'Int'): no model
with one (DeepLabV3+'s ASPP, CGNet) could get its expected outputs, so no .bpte and no run on the target.
Here conv2d of integer tensors with a dilation is computed in float64 and cast back: every product and
partial sum of int8 x int8 values over a kernel window is an integer far below 2**53, so float64 holds it
exactly and the result is the int32 accumulator bit for bit. Every other call is torch's own."""
from __future__ import annotations

from typing import Any

_installed = False


def install_int_dilated_conv() -> None:
    """Wrap torch.nn.functional.conv2d once per process (idempotent); only calls torch would refuse change."""
    global _installed
    if _installed:
        return
    import torch
    import torch.nn.functional as F

    original = F.conv2d

    def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
               groups: int = 1) -> Any:
        dil = (dilation, dilation) if isinstance(dilation, int) else tuple(dilation)
        if (isinstance(input, torch.Tensor) and not input.is_floating_point() and not input.is_complex()
                and any(d != 1 for d in dil) and not isinstance(input, torch._subclasses.FakeTensor)):
            acc = original(input.double(), weight.double(), None if bias is None else bias.double(),
                           stride, padding, dilation, groups)
            return acc.round().to(input.dtype)
        return original(input, weight, bias, stride, padding, dilation, groups)

    conv2d.__wrapped__ = original            # type: ignore[attr-defined]
    F.conv2d = conv2d                        # type: ignore[assignment]
    _installed = True
