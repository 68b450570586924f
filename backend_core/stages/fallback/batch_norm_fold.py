"""Why a batch norm was not folded, and the change that makes it fold.

torchao's prepare_pt2e (`_fuse_conv_bn_`, `_fuse_linear_bn_`) folds an eval-mode batch norm into the
op that produces its input, and only when that op is a convolution (or conv transpose), or a linear on
a 2-D input. Every other batch norm stays in the graph, the Cortex-M quantizer has no pattern for it,
and it runs in float on ExecuTorch's portable kernel. Which case it is can be read off the float export:
the batch norm's own target (training mode) and the node that feeds it.
"""
from __future__ import annotations

from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot

BATCH_NORMS = frozenset({"batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit",
                         "native_batch_norm", "_batch_norm_with_update", "batch_norm_"})
_CONVS = frozenset({"conv1d", "conv2d", "conv3d", "convolution", "conv_transpose1d", "conv_transpose2d",
                    "conv_transpose3d", "_convolution"})
_LAYOUT_COPIES = frozenset({"clone", "contiguous", "_to_copy", "to", "_to_dim_order_copy", "view", "reshape",
                            "permute", "transpose", "flatten", "unsqueeze", "squeeze", "alias"})
_TRAINING = frozenset({"_native_batch_norm_legit", "native_batch_norm", "_batch_norm_with_update"})


def is_batch_norm(target: str) -> bool:
    return op_base_name(target) in BATCH_NORMS


def _at(node: NodeSnapshot) -> str:
    src = node.source
    return src.short if src is not None else ""


def _where(node: NodeSnapshot) -> str:
    return f" ({_at(node)})" if _at(node) else ""


def _named(node: NodeSnapshot) -> str:
    """`cat` at net.py:15, or `conv2d_3` (conv2d at net.py:9) when the name is not the op's."""
    base, at = op_base_name(node.target), _at(node)
    if node.name == base or node.name.rstrip("_0123456789") == base:
        return f"`{node.name}`" + (f" at {at}" if at else "")
    return f"`{node.name}` ({base}" + (f" at {at})" if at else ")")


def _float_node(snapshots: list[GraphSnapshot], q: NodeSnapshot) -> tuple[GraphSnapshot, NodeSnapshot] | None:
    """The batch norm in the float export (before prepare_pt2e folded anything), by its name."""
    for snap in snapshots:
        if snap.kind == "export":
            node = snap.node(q.name) or snap.node(q.id)
            return (snap, node) if node is not None else None
    return None


def _producer(snap: GraphSnapshot, node: NodeSnapshot) -> NodeSnapshot | None:
    return snap.node(node.inputs[0]) if node.inputs else None


def _users(snap: GraphSnapshot, node_id: str) -> list[NodeSnapshot]:
    return [n for n in snap.nodes if node_id in n.inputs]


def why_not_folded(snapshots: list[GraphSnapshot], q: NodeSnapshot | None) -> tuple[str, str] | None:
    """(why this batch norm was not folded, the change that makes it fold), or None when `q` (the user's
    op at quantization time) is no batch norm or the float export does not have it."""
    if q is None or not is_batch_norm(q.target):
        return None
    found = _float_node(snapshots, q)
    if found is None:
        return None
    snap, bn = found
    head = (f"The batch norm `{bn.name}`{_where(bn)} was not folded into a convolution: torchao's prepare_pt2e "
            f"folds an eval-mode batch norm only into the conv (or 2-D linear) whose output it reads directly. ")
    tail = (" So it stays in float: the Cortex-M quantizer has no pattern for a lone batch norm, and ExecuTorch's "
            "portable fp32 kernel runs it (between a dequantize and a quantize when its neighbours are quantized).")
    if op_base_name(bn.target) in _TRAINING:
        return (head + "This one was exported in training mode (it updates its running statistics), which is "
                "never folded." + tail,
                "Call `model.eval()` before exporting (CortexM Lens exports the module as given).")
    src = _producer(snap, bn)
    if src is None or src.fx_op == "placeholder":
        return (head + "This one normalises the model's input: no op produces it." + tail,
                "Fold it into the input preprocessing (scale and shift each channel of the input before it "
                "reaches the model), or into the first conv by hand.")
    base = op_base_name(src.target)
    if base in _CONVS:
        return (head + f"Its input is the conv {_named(src)}, yet the fold did not happen: a conv whose weight is "
                "not a constant, or one shared with another batch norm, is not folded." + tail,
                "Give the batch norm a conv of its own with constant weights.")
    if base == "linear":
        return (head + f"Its input is the linear {_named(src)} on an input of more than 2 dims: the batch norm "
                "normalises dim 1, the linear acts on the last dim, so folding would be wrong (pytorch/ao#4116)."
                + tail, "Flatten to (N, C) before the linear, or use a 1x1 conv in place of the linear.")
    if base in _LAYOUT_COPIES:
        before = _producer(snap, src)
        conv = f" after the conv {_named(before)}" if before is not None and op_base_name(before.target) in _CONVS else ""
        return (head + f"Its input is {_named(src)}{conv}: an op between the conv and the batch norm stops the "
                "fold." + tail,
                f"Move the {base} after the batch norm (conv → batch norm → {base}), so the batch norm reads "
                "the conv's output.")
    nxt = [u for u in _users(snap, bn.id) if op_base_name(u.target) in _CONVS]
    by_hand = (" It feeds the conv " + _named(nxt[0]) + " directly: folding it into that conv's weights by hand "
               "(w·γ/σ per input channel, the shift into the bias) is exact where the conv has no zero padding."
               if nxt else "")
    return (head + f"Its input is {_named(src)}, not a convolution (a pre-activation block: batch norm → ReLU → "
            "conv, as in DenseNet or after a concatenation)." + by_hand + tail,
            "Reorder the block as conv → batch norm → ReLU (post-activation), so each batch norm follows its conv "
            "and folds; or accept the float batch norm (it costs a dequantize, a float pass and a quantize).")
