"""Work an op does, from the final snapshot's shapes alone: multiply-accumulates and bytes moved.

MACs are counted for the ops whose cost is dominated by them (conv, depthwise conv, linear, matmul),
as the usual "one MAC per weight per output position": for a conv, (output positions N*H*W) x (weight
elements), which holds for grouped and depthwise convs too (their weight has Cin/groups per filter);
for a linear, (rows) x (weight elements). Other ops get None, not 0: a LayerNorm's work is not MACs.

Bytes moved: every tensor argument read once (activations, weights, bias, requantize tables; not the
scratch buffer) plus the output written once. A lower bound of real traffic (im2col and cache misses
are not counted), enough to tell a memory-bound op from a compute-bound one."""
from __future__ import annotations

import math

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot

DTYPE_BYTES = {"int8": 1, "uint8": 1, "bool": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
               "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "float64": 8}

_CONV = ("quantized_conv2d", "quantized_depthwise_conv2d", "convolution", "conv2d", "conv1d")
_TRANSPOSE_CONV = ("quantized_transpose_conv2d", "conv_transpose2d")
_LINEAR = ("quantized_linear", "linear", "addmm")
_MATMUL = ("mm", "bmm", "matmul", "quantized_mm", "quantized_bmm", "quantized_matmul")


def _numel(shape: tuple[int, ...] | None) -> int | None:
    return None if shape is None else int(math.prod(shape))


def op_name(target: str) -> str:
    """"cortex_m.quantized_conv2d.default" -> "quantized_conv2d"."""
    parts = target.split(".")
    return parts[1] if len(parts) >= 3 else parts[0]


def macs(node: NodeSnapshot, graph: GraphSnapshot) -> int | None:
    """Multiply-accumulates of one node, or None when the op is not MAC-bound or a shape is missing."""
    name = op_name(node.target)
    out = _numel(node.shape)
    ins = [graph.node(i) for i in node.inputs]
    if out is None or not ins:
        return None
    if name in _CONV or name in _TRANSPOSE_CONV:
        w = ins[1] if len(ins) > 1 else None
        wn = _numel(w.shape) if w is not None else None
        if wn is None:
            return None
        if name in _TRANSPOSE_CONV:          # each input position scatters one weight set
            x = ins[0]
            xn = _numel(x.shape) if x is not None else None
            cin = x.shape[1] if x is not None and x.shape and len(x.shape) > 1 else None
            return None if xn is None or not cin else xn // cin * wn
        cout = node.shape[1] if node.shape and len(node.shape) > 1 else None
        return None if not cout else out // cout * wn
    if name in _LINEAR:
        w = ins[2] if name == "addmm" and len(ins) > 2 else (ins[1] if len(ins) > 1 else None)
        if w is None or not w.shape:
            return None
        wn = _numel(w.shape)
        out_features = w.shape[-1] if name == "addmm" else w.shape[0]
        return None if not out_features or wn is None else out // out_features * wn
    if name in _MATMUL:
        a = ins[0]
        k = a.shape[-1] if a is not None and a.shape else None
        return None if not k else out * k
    return None


def tensor_bytes(node: NodeSnapshot | None) -> int:
    if node is None or node.shape is None or node.dtype is None:
        return 0
    return (_numel(node.shape) or 0) * DTYPE_BYTES.get(node.dtype.replace("torch.", ""), 4)


def bytes_moved(node: NodeSnapshot, graph: GraphSnapshot) -> int | None:
    """Bytes read (each tensor argument once, scratch excluded) plus bytes written (the output)."""
    if node.shape is None:
        return None
    read = 0
    seen: set[str] = set()
    for i in node.inputs:
        src = graph.node(i)
        if i in seen or src is None or src.target == "memory.alloc":
            continue
        seen.add(i)
        read += tensor_bytes(src)
    return read + tensor_bytes(node)
