"""Host reference of dilated integer convolutions. ExecuTorch's Python reference of the cortex_m conv
kernels (cortex_m/ops/operators.py) accumulates in int32 with torch.nn.functional.conv2d, and torch has
no integer kernel for a dilated convolution ("slow_conv_dilated<>" not implemented for 'Int'): no model
with one (DeepLabV3+'s ASPP, CGNet) could get its expected outputs, so no .bpte and no run on the target.
Here conv2d of integer tensors with a dilation is computed in float64 and cast back: every product and
partial sum of int8 x int8 values over a kernel window is an integer far below 2**53, so float64 holds it
exactly and the result is the int32 accumulator bit for bit. The same holds for every integer conv whose
sums are bounded so (_exact_in_float64: int8 data always is), and float64 runs through BLAS where torch's
integer conv is a naive loop: mv2's host run took ~40 s. Every other call is torch's own."""
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
        integer = (isinstance(input, torch.Tensor) and not input.is_floating_point() and not input.is_complex()
                   and not isinstance(input, torch._subclasses.FakeTensor))
        if integer and input.dim() == 4 and groups == input.shape[1] and weight.shape[1] == 1:
            return _depthwise_taps(input, weight, bias, _pair(stride), _pair(padding), dil)
        if integer and (any(d != 1 for d in dil) or _exact_in_float64(input, weight, bias)):
            acc = original(input.double(), weight.double(), None if bias is None else bias.double(),
                           stride, padding, dilation, groups)
            return acc.round().to(input.dtype)
        return original(input, weight, bias, stride, padding, dilation, groups)

    conv2d.__wrapped__ = original            # type: ignore[attr-defined]
    F.conv2d = conv2d                        # type: ignore[assignment]
    _installed = True


def _exact_in_float64(input: Any, weight: Any, bias: Any) -> bool:
    """Whether every partial sum of this integer conv is an integer below 2**53 (then float64 computes the
    int32 accumulator bit for bit, through BLAS: torch's integer conv has no fast kernel, and the host
    check of a patch schedule on mv2 spent ~40 s a run in it)."""
    if not input.numel() or not weight.numel():
        return False
    k = weight.numel() // max(int(weight.shape[0]), 1)
    most = _absmax(input) * _absmax(weight) * k       # (abs() of an int8 -128 is -128: min and max instead)
    most += _absmax(bias) if bias is not None and bias.numel() else 0
    return most < 2 ** 53


def _absmax(t: Any) -> int:
    return max(abs(int(t.min())), abs(int(t.max())))


def _pair(v: Any) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _depthwise_taps(x: Any, w: Any, bias: Any, stride: tuple[int, int], padding: tuple[int, int],
                    dilation: tuple[int, int]) -> Any:
    """An integer depthwise conv as the sum of its kernel taps (one strided slice times one weight per
    tap, in the input's integer type): the same integer sums as torch's, whose integer depthwise conv is
    a naive loop (mv2's 17 took 15 s of a 20 s host run)."""
    import torch

    mult = w.shape[0] // x.shape[1]
    if mult > 1:
        x = x.repeat_interleave(mult, dim=1)
    x = torch.nn.functional.pad(x, (padding[1], padding[1], padding[0], padding[0]))
    kh, kw = int(w.shape[2]), int(w.shape[3])
    ho = (x.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (x.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = torch.zeros((x.shape[0], w.shape[0], ho, wo), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            h0, w0 = i * dilation[0], j * dilation[1]
            tap = x[:, :, h0:h0 + stride[0] * (ho - 1) + 1:stride[0], w0:w0 + stride[1] * (wo - 1) + 1:stride[1]]
            out += tap * w[:, 0, i, j].to(x.dtype).view(1, -1, 1, 1)
    if bias is not None:
        out += bias.to(x.dtype).view(1, -1, 1, 1)
    return out
