"""Which ops of a lowered program can run patch by patch, and which input box each output box needs.

The prefix of a schedule is every op between the program's input and the split tensor. It may hold
only ops whose output pixel depends on a known window of input pixels: the CMSIS-NN convolutions
(`cortex_m.quantized_conv2d`, `quantized_depthwise_conv2d`: kernel, stride, padding, dilation read from
the node) and pointwise ops (quantize, add, mul, activation LUTs, min/max). Anything else (a pool, a
global op, a linear, a transpose) ends the region a split can come from: that is the op the report
names when a model cannot be patched. Boxes are half-open `(h0, h1, w0, w1)` in a tensor's own
(logical NCHW) coordinates."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Box = tuple[int, int, int, int]

CONVS = ("cortex_m.quantized_conv2d.default", "cortex_m.quantized_depthwise_conv2d.default")
POINTWISE = ("cortex_m.quantize_per_tensor.default", "cortex_m.quantized_add.default",
             "cortex_m.quantized_mul.default", "cortex_m.quantized_activation.default",
             "cortex_m.minimum.default", "cortex_m.maximum.default")
PLUMBING = ("memory.alloc",)


def target_of(node: Any) -> str:
    """`cortex_m.quantized_conv2d.default` for an edge op, `memory.alloc` for ExecuTorch's alloc."""
    t = node.target
    name = getattr(t, "_name", None) or getattr(t, "__name__", str(t))
    name = str(name).replace("::", ".")
    if name == "alloc":
        return "memory.alloc"
    return name if name.count(".") >= 2 else f"{name}.default"


def val_of(node: Any) -> Any:
    return node.meta.get("val") if hasattr(node, "meta") else None


def hw(node: Any) -> tuple[int, int]:
    shape = tuple(val_of(node).shape)
    return int(shape[2]), int(shape[3])


@dataclass(frozen=True)
class ConvGeometry:
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    macs_per_output: int          # multiply-accumulates per output element

    def input_span(self, lo: int, hi: int, axis: int) -> tuple[int, int]:
        """Input rows (axis 0) or columns (axis 1) output rows [lo, hi) read, padding coordinates
        included (so the span may start below 0 or end past the input)."""
        s, p, d, k = self.stride[axis], self.padding[axis], self.dilation[axis], self.kernel[axis]
        return lo * s - p, (hi - 1) * s - p + d * (k - 1) + 1


def conv_geometry(node: Any) -> ConvGeometry:
    weight = val_of(node.args[1])             # OHWI (conv) or 1HWC (depthwise), as AtenToCortexMPass writes it
    kh, kw = int(weight.shape[1]), int(weight.shape[2])
    depthwise = "depthwise" in target_of(node)
    cin = 1 if depthwise else int(weight.shape[3])
    st, pad, dil = node.args[3], node.args[4], node.args[5]
    return ConvGeometry((kh, kw), (int(st[0]), int(st[1])), (int(pad[0]), int(pad[1])),
                        (int(dil[0]), int(dil[1])), cin * kh * kw)


def is_spatial(node: Any) -> bool:
    v = val_of(node)
    return v is not None and hasattr(v, "shape") and len(v.shape) == 4


def kind_of(node: Any) -> str:
    """conv | pointwise | plumbing | other."""
    t = target_of(node)
    if t in CONVS:
        return "conv"
    if t in PLUMBING:
        return "plumbing"
    if t in POINTWISE and is_spatial(node):
        ins = [a for a in node.args if hasattr(a, "meta") and is_spatial(a)]
        if all(tuple(val_of(a).shape) == tuple(val_of(node).shape) for a in ins):
            return "pointwise"
    return "other"


def tensor_args(node: Any) -> list[Any]:
    """The activation inputs of a prefix op (weights, tables and scratch are not patched)."""
    if kind_of(node) == "conv":
        return [node.args[0]]
    return [a for a in node.args if hasattr(a, "op") and is_spatial(a) and a.op != "get_attr"
            and not _is_constant(a)]


def _is_constant(node: Any) -> bool:
    return node.op == "placeholder" and not node.meta.get("schedule_user_input", False)


def macs_of(node: Any) -> int:
    """Multiply-accumulates of one conv over its whole output (0 for other ops)."""
    if kind_of(node) != "conv":
        return 0
    v = val_of(node)
    n = 1
    for s in v.shape:
        n *= int(s)
    return n * conv_geometry(node).macs_per_output


def needed_boxes(order: list[Any], split: Any, out_box: Box) -> dict[Any, Box]:
    """The box each prefix node must compute so that `split` can produce `out_box`: walk the prefix
    backwards; a node several consumers read computes the bounding box of what they need."""
    need: dict[Any, Box] = {split: out_box}
    for node in reversed(order):
        box = need.get(node)
        if box is None:
            continue
        for src, src_box in input_boxes(node, box):
            old = need.get(src)
            need[src] = src_box if old is None else (min(old[0], src_box[0]), max(old[1], src_box[1]),
                                                     min(old[2], src_box[2]), max(old[3], src_box[3]))
    return need


def input_boxes(node: Any, box: Box) -> list[tuple[Any, Box]]:
    """What each activation input of `node` must hold (clipped to the input) for output `box`."""
    if kind_of(node) == "conv":
        src = node.args[0]
        h, w = hw(src)
        g = conv_geometry(node)
        a0, a1 = g.input_span(box[0], box[1], 0)
        b0, b1 = g.input_span(box[2], box[3], 1)
        return [(src, (max(a0, 0), min(a1, h), max(b0, 0), min(b1, w)))]
    return [(a, box) for a in tensor_args(node)]


def conv_pads(node: Any, box: Box) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) zero-point padding the conv needs around its clipped input box."""
    h, w = hw(node.args[0])
    g = conv_geometry(node)
    a0, a1 = g.input_span(box[0], box[1], 0)
    b0, b1 = g.input_span(box[2], box[3], 1)
    return max(0, -a0), max(0, a1 - h), max(0, -b0), max(0, b1 - w)


def folds(node: Any, box: Box) -> tuple[bool, bool]:
    """Per axis (H, W): can the conv's own symmetric padding stand for the patch's border padding?
    Yes when the leading pad is at least the trailing one and a conv padded by the leading amount on
    both sides still gives exactly the patch's outputs (the extra trailing rows are never read)."""
    top, bottom, left, right = conv_pads(node, box)
    (_, (a0, a1, b0, b1)), = input_boxes(node, box)
    g = conv_geometry(node)

    def ok(lead: int, trail: int, length: int, n: int, axis: int) -> bool:
        span = g.dilation[axis] * (g.kernel[axis] - 1) + 1
        return trail <= lead and (length + 2 * lead - span) // g.stride[axis] + 1 == n

    return ok(top, bottom, a1 - a0, box[1] - box[0], 0), ok(left, right, b1 - b0, box[3] - box[2], 1)
