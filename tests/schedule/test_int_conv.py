"""The host reference's integer conv in float64 (int_conv.py) is torch's own int32 conv bit for bit, for the
shapes the cortex_m reference kernels give it (int8 data offset into int32, int32 bias, depthwise groups,
strides, padding; depthwise ones as a sum of kernel taps), and an accumulator that float64 could not
hold stays on torch's integer kernel."""
from __future__ import annotations

import pytest
import torch

from backend_core.stages.pipeline.int_conv import _exact_in_float64, install_int_dilated_conv


@pytest.mark.parametrize("cin,cout,groups,stride,padding,k", [
    (3, 16, 1, 2, 1, 3), (16, 16, 16, 1, 1, 3), (16, 32, 1, 1, 0, 1), (8, 8, 8, 2, 1, 3), (8, 16, 8, 2, 2, 5),
    (4, 4, 4, 1, 0, 3)])
def test_float64_conv_is_the_int32_conv(cin: int, cout: int, groups: int, stride: int, padding: int, k: int) -> None:
    install_int_dilated_conv()
    g = torch.Generator().manual_seed(cin * cout + k)
    x = torch.randint(-128, 128, (1, cin, 19, 17), generator=g, dtype=torch.int32) + 128   # input + offset
    w = torch.randint(-128, 128, (cout, cin // groups, k, k), generator=g, dtype=torch.int32)
    b = torch.randint(-2 ** 20, 2 ** 20, (cout,), generator=g, dtype=torch.int32)
    assert groups > 1 or _exact_in_float64(x, w, b)
    got = torch.nn.functional.conv2d(x, w, b, stride, padding, 1, groups)
    want = torch.nn.functional.conv2d.__wrapped__(x, w, b, stride, padding, 1, groups)
    assert got.dtype == want.dtype == torch.int32 and torch.equal(got, want)


def test_a_dilated_depthwise_conv_is_the_float64_one() -> None:
    install_int_dilated_conv()
    g = torch.Generator().manual_seed(7)
    x = torch.randint(-128, 128, (1, 8, 15, 13), generator=g, dtype=torch.int32)
    w = torch.randint(-128, 128, (8, 1, 3, 3), generator=g, dtype=torch.int32)
    got = torch.nn.functional.conv2d(x, w, None, 1, 2, 2, 8)
    want = torch.nn.functional.conv2d.__wrapped__(x.double(), w.double(), None, 1, 2, 2, 8).round().int()
    assert torch.equal(got, want)


def test_a_sum_float64_cannot_hold_is_not_taken_there() -> None:
    x = torch.full((1, 4, 3, 3), 2 ** 30, dtype=torch.int64)
    w = torch.full((1, 4, 3, 3), 2 ** 30, dtype=torch.int64)
    assert not _exact_in_float64(x, w, None)
    assert _exact_in_float64(torch.full((1, 1, 2, 2), -128, dtype=torch.int8), torch.ones(1, 1, 1, 1), None)
