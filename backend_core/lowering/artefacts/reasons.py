"""Why a portable kernel runs in a program, as far as the program alone can tell.

A .pte keeps no quantizer verdicts, pass warnings or source lines, so these reasons rest only on
what is in it: the op's dtypes, its neighbours (a dequantize before / a quantize after = a float
island), and whether the installed ExecuTorch's AtenToCortexMPass has a substitution for the op
at all. Every reason says so and points at the model source or an ETRecord for the full story."""
from __future__ import annotations

from dataclasses import replace

from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import KIND_FALLBACK, KIND_QUANT, FallbackReason, GraphSnapshot, NodeSnapshot
from backend_core.lowering.artefacts.schemas import substitution_bases

__all__ = ["explain_program", "explain_program_node", "substitution_bases"]

_ACTIVATIONS = frozenset({"relu", "relu_", "clamp", "clamp_", "hardtanh", "hardtanh_", "relu6"})
_FUSES_INTO = ("quantized_conv2d", "quantized_depthwise_conv2d", "quantized_linear", "quantized_add")


def _neighbours(snap: GraphSnapshot, node: NodeSnapshot) -> tuple[list[NodeSnapshot], list[NodeSnapshot]]:
    nm = snap.node_map()
    producers = [nm[i] for i in node.inputs if i in nm]
    consumers = [nm[e.dst] for e in snap.edges if e.src == node.id and e.dst in nm]
    return producers, consumers


def explain_program_node(snap: GraphSnapshot, node: NodeSnapshot, substitutions: frozenset[str], *,
                         more: str) -> FallbackReason:
    """`more` names where the full explanation is (model source, ETRecord)."""
    from backend_core.stages.fallback.suggestions import suggestion_for   # the fallback package costs ~0.2 s to import

    base = op_base_name(node.target)
    producers, consumers = _neighbours(snap, node)
    fed_dq = [p for p in producers if p.kind == KIND_QUANT and op_base_name(p.target).startswith("dequantize")]
    feeds_q = [c for c in consumers if c.kind == KIND_QUANT and not op_base_name(c.target).startswith("dequantize")]
    dtype = node.dtype or "?"
    float_out = dtype.startswith(("float", "bfloat"))
    has_sub = base in substitutions or base.removesuffix("_with_indices") in substitutions
    evidence = [f"program: {node.target} with {dtype} output" + (f" {list(node.shape)}" if node.shape else "")]
    if fed_dq or feeds_q:
        evidence.append("sits between " + " and ".join(
            w for w, c in (("a dequantize", fed_dq), ("a quantize", feeds_q)) if c) + " (a float island)")
    evidence.append(f"the installed AtenToCortexMPass {'has' if has_sub else 'has no'} substitution for "
                    f"aten.{base}")
    producer = producers[0] if producers else None
    if float_out and (fed_dq or feeds_q or not has_sub):
        cat = "not_annotated"
        msg = (f"{base} runs in float between a dequantize and a quantize on a portable fp32 kernel: the "
               f"quantizer left it unannotated or a pattern check rejected it (the program cannot say which).")
    elif base in _ACTIVATIONS and producer is not None and not any(
            op_base_name(producer.target) == k for k in _FUSES_INTO):
        cat = "activation_not_fused"
        what = op_base_name(producer.target)
        msg = (f"A standalone {dtype} {base} after {what}: activations fuse only into the conv, linear or add "
               f"kernel right before them, so this one runs as a separate portable kernel.")
        evidence.append(f"its input comes from {producer.target}, not a kernel an activation fuses into")
    elif not has_sub:
        cat = "no_cortex_m_rewrite"
        msg = (f"{base} runs on a portable {dtype} kernel: no cortex_m kernel for this op exists in this "
               f"ExecuTorch version.")
    else:
        cat = "no_cortex_m_rewrite"
        msg = (f"{base} runs on a portable {dtype} kernel: a cortex_m kernel exists for it, but this "
               f"configuration was not rewritten (shape, attributes or target).")
    msg += f" The program alone says no more: {more} gives the full explanation."
    evidence.append("no quantizer verdicts, pass warnings or source lines are stored in a program")
    return FallbackReason(category=cat, message=msg, evidence=tuple(evidence),
                          suggestion=suggestion_for(base, cat), stage=snap.stage)


def explain_program(snap: GraphSnapshot, substitutions: frozenset[str], *,
                    more: str = "the model source (cmlens lower model.py) or an ETRecord") -> GraphSnapshot:
    """The snapshot with a program-level FallbackReason on every portable compute node."""
    nodes = tuple(replace(n, fallback=explain_program_node(snap, n, substitutions, more=more))
                  if n.kind == KIND_FALLBACK and n.fallback is None else n for n in snap.nodes)
    return replace(snap, nodes=nodes)
