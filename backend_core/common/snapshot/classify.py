"""Classify a node by what it costs on the target: CMSIS-NN kernel, portable fallback,
data movement, quantization boundary or plumbing. Works on target names only (no torch)."""
from __future__ import annotations

from backend_core.common.snapshot.model import (KIND_ATEN, KIND_CMSIS, KIND_DATA, KIND_FALLBACK, KIND_INPUT, KIND_PLUMBING,
                    KIND_QUANT, KIND_WEIGHT)

# Ops that only move or reinterpret data; on the target they run on portable kernels but
# cost no arithmetic, so they are not "compute fallbacks".
DATA_MOVEMENT_OPS = frozenset({
    "view", "view_copy", "reshape", "_unsafe_view", "clone", "_clone_dim_order",
    "_to_dim_order_copy", "_to_copy", "permute", "permute_copy", "transpose", "transpose_copy",
    "t", "t_copy", "expand", "expand_copy", "squeeze", "squeeze_copy", "unsqueeze",
    "unsqueeze_copy", "cat", "concat", "slice", "slice_copy", "select", "select_copy", "split",
    "split_copy", "split_with_sizes", "split_with_sizes_copy", "unbind", "unbind_copy", "flatten",
    "contiguous", "alias", "alias_copy", "detach", "detach_copy", "pixel_shuffle",
    "pixel_unshuffle", "stack", "repeat", "narrow", "narrow_copy", "constant_pad_nd",
    "channel_shuffle", "lift_fresh_copy", "copy", "unflatten", "movedim", "flip",
})

# Moves the Cortex-M backend has a CMSIS-NN kernel for (cortex_m::pad = arm_pad, cortex_m::transpose =
# arm_transpose, used for an int8 input), and repeat, which copies its input N times: left on a portable kernel
# they are fallbacks with a reason and a cost, as plain ExecuTorch's op list counts them, not free data movement.
KERNEL_BACKED_MOVES = {"constant_pad_nd": "cortex_m::pad (CMSIS-NN arm_pad)",
                       "permute": "cortex_m::transpose (CMSIS-NN arm_transpose)",
                       "permute_copy": "cortex_m::transpose (CMSIS-NN arm_transpose)",
                       "repeat": ""}

QUANT_OP_MARKERS = ("quantize_per_tensor", "quantize_per_channel", "dequantize_per_tensor",
                    "dequantize_per_channel", "choose_qparams", "quantize_per_token",
                    "dequantize_per_token")

PLUMBING_TARGETS = frozenset({"getitem", "memory.alloc", "alloc", "output"})


def op_base_name(target: str) -> str:
    """`aten.view_copy.default` -> `view_copy`; `dim_order_ops._clone_dim_order.default` -> `_clone_dim_order`."""
    parts = target.split(".")
    if len(parts) >= 3:
        return parts[-2]
    if len(parts) == 2:
        return parts[-1]
    return target


def namespace(target: str) -> str:
    parts = target.split(".")
    return parts[0] if len(parts) >= 3 else ""


def is_quant_boundary(target: str) -> bool:
    base = op_base_name(target)
    return any(base == m or base.startswith(m) for m in QUANT_OP_MARKERS)


def classify(op: str, target: str, *, is_user_input: bool = False, final: bool = False) -> str:
    """Return one of the KIND_* constants for a node."""
    if op == "placeholder":
        return KIND_INPUT if is_user_input else KIND_WEIGHT
    if op == "get_attr":
        return KIND_WEIGHT
    if op == "output":
        return KIND_PLUMBING
    if target in PLUMBING_TARGETS or target.startswith("memory.") or target.endswith("getitem"):
        return KIND_PLUMBING
    if is_quant_boundary(target):
        return KIND_QUANT
    ns = namespace(target)
    if ns == "cortex_m":
        return KIND_CMSIS
    if final and op_base_name(target) in KERNEL_BACKED_MOVES:
        return KIND_FALLBACK
    if op_base_name(target) in DATA_MOVEMENT_OPS:
        return KIND_DATA
    return KIND_FALLBACK if final else KIND_ATEN
