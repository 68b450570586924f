"""Small tensor helpers shared by the analysis: dequantize a captured value with its Point,
and bring a reference tensor into the layout of the lowered one (the explicit-layout flow
lowers NCHW tensors to NHWC, so the same tensor has permuted dims there)."""
from __future__ import annotations

from typing import Any

from backend_core.analyses.numerics.align import Point

# Candidate permutations from the reference layout (NCHW / NCL) to the lowered one.
_PERMS = {4: ((0, 2, 3, 1), (0, 3, 1, 2)), 3: ((0, 2, 1),)}


def first_tensor(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return first_tensor(v[0]) if v else None
    return v if hasattr(v, "dtype") else None


def dequant(raw: Any, p: Point) -> Any:
    import torch

    t = first_tensor(raw)
    if t is None:
        return None
    if p.scale is None:
        return t.detach().to(torch.float32)
    return (t.detach().to(torch.float32) - float(p.zero_point)) * float(p.scale)


def align(t: Any, shape: tuple[int, ...]) -> Any | None:
    """`t` viewed with logical shape `shape`: as is, permuted NCHW→NHWC, or None."""
    if t is None:
        return None
    if tuple(t.shape) == tuple(shape):
        return t
    if t.numel() == 1 and _numel(shape) == 1:
        return t.reshape(shape)
    for perm in _PERMS.get(t.dim(), ()):
        if tuple(t.shape[i] for i in perm) == tuple(shape):
            return t.permute(*perm)
    return None


def align_like(ref: Any, actual: Any) -> Any | None:
    """A copy of `ref` with the dtype, shape and strides of `actual` (None if it cannot fit)."""
    import torch

    actual = first_tensor(actual)
    ref = first_tensor(ref)
    if actual is None or ref is None:
        return None
    r = align(ref, tuple(actual.shape))
    if r is None:
        return None
    out = torch.empty_like(actual)
    out.copy_(r.to(actual.dtype) if actual.dtype != r.dtype else r)
    return out


def sample_indices(numel: int, k: int) -> Any:
    import torch

    if numel <= k:
        return torch.arange(numel)
    return torch.linspace(0, numel - 1, k).round().to(torch.int64)


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n
