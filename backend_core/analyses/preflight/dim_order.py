"""ExecuTorch's dim-order predicates, in Python, exactly as the runtime evaluates them
(runtime/core/exec_aten/util/dim_order_util.h and tensor_util_portable.cpp), so a rule agrees with
the target on every tensor, including the 0-D and 1-D ones that can never be channels-last."""
from __future__ import annotations

from typing import Sequence

DimOrder = Sequence[int]


def is_contiguous(order: DimOrder) -> bool:
    """is_contiguous_dim_order: 0, 1, 2, ... (vacuously true for a 0-D tensor)."""
    return all(d == i for i, d in enumerate(order))


def is_channels_last(order: DimOrder) -> bool:
    """is_channels_last_dim_order: only 4-D (0,2,3,1) and 5-D (0,2,3,4,1) tensors."""
    n = len(order)
    if n not in (4, 5) or order[-1] != 1 or order[0] != 0:
        return False
    return all(order[d] == d + 1 for d in range(1, n - 1))


def same_dim_order(orders: Sequence[DimOrder]) -> bool:
    """tensors_have_same_dim_order: all contiguous, or all channels-last."""
    return all(is_contiguous(o) for o in orders) or all(is_channels_last(o) for o in orders)


def describe(order: DimOrder | None) -> str:
    if order is None:
        return "unknown dim order"
    text = "(" + ", ".join(str(d) for d in order) + ")"
    if is_contiguous(order):
        return f"contiguous {text}"
    if is_channels_last(order):
        return f"channels-last {text}"
    return f"dim order {text}"


def strides(sizes: Sequence[int], order: DimOrder) -> tuple[int, ...]:
    """dim_order_to_stride_nocheck: the strides the runtime derives from sizes + dim order."""
    n = len(sizes)
    if n == 0:
        return ()
    out = [0] * n
    out[order[n - 1]] = 1
    for i in range(n - 2, -1, -1):
        nxt = order[i + 1]
        out[order[i]] = out[nxt] if sizes[nxt] == 0 else out[nxt] * sizes[nxt]
    return tuple(out)
