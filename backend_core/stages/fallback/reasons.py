"""Explain every portable compute fallback in the final graph with a FallbackReason record,
in terms of the op the user wrote: the node at quantization time (`user_op`), traced through
to_edge's decompositions and the Cortex-M passes. Nodes one user op became share a `group`.

The facts come from backend_core.stages.fallback.evidence; the words for each case from here and
backend_core.stages.fallback.suggestions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from backend_core.common.provenance import Provenance
from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import KIND_FALLBACK, FallbackReason, GraphSnapshot, NodeSnapshot
from backend_core.stages.fallback.batch_norm_fold import why_not_folded
from backend_core.stages.fallback.quantizer_failure import reads_only_parameters
from backend_core.stages.fallback.evidence import Facts, evidence_lines, gather
from backend_core.stages.fallback.suggestions import suggestion_for, suggestion_for_activation
from backend_core.stages.fallback.reason_costs import move_cost
from backend_core.stages.fallback.reason_texts import (
    at_q, float_where, later_text, parameter_computation_text, pass_failure_text, rnn_module_text)
from backend_core.stages.fallback.user_op import RNN_MODULES, UserOpResolver, group_id

CATEGORIES = {
    "not_annotated": "not annotated by the quantizer",
    "rejected_by_quantizer": "rejected by a quantizer pattern check",
    "no_cortex_m_rewrite": "quantized, but no Cortex-M rewrite for this target",
    "activation_not_fused": "activation could not be fused",
    "unsupported_dtype": "unsupported dtype",
    "layout": "layout (the legacy flow needs channels_last tensors)",
    "unsupported_module": "module not supported by the backend (its decomposition runs in float)",
    "integer_arithmetic": "integer (index) arithmetic: not quantizable, usually cheap",
    "data_dependent_scalar": "a scalar read out of a tensor at run time (.item()): data-dependent",
    "pass_failure": "taken out of quantisation by --keep-going: an ExecuTorch pass failed on it",
    "parameter_computation": "computed from parameters only (a weight norm, parametrization or constraint) "
                             "on every inference",
    "unknown": "unknown (a gap)",
}

SHARED_FLOAT = "non-quantized"     # SharedQspecQuantizer: "All inputs and outputs ... are non-quantized."
ACTIVATIONS = frozenset({"relu", "relu_", "hardtanh", "hardtanh_", "clamp", "clamp_"})
LAYOUT_FIX = ("the legacy flow needs channels_last inputs and weights: "
              "`model.to(memory_format=torch.channels_last)` and `x.to(memory_format=torch.channels_last)`")


@dataclass
class FallbackContext:
    snapshots: list[GraphSnapshot]
    verdicts: dict[str, Any]                 # QuantizerDecisions.to_dict()
    target: str
    flow: str
    supported_targets: frozenset[str] = frozenset()   # targets AtenToCortexMPass can rewrite
    provenance: Provenance | None = field(default=None)
    resolver: UserOpResolver | None = field(default=None)

    def prov(self) -> Provenance:
        if self.provenance is None:
            self.provenance = Provenance(self.snapshots)
        return self.provenance

    def users(self) -> UserOpResolver:
        if self.resolver is None:
            self.resolver = UserOpResolver(self.snapshots, self.prov())
        return self.resolver


def _producer_at_q(ctx: FallbackContext, f: Facts) -> NodeSnapshot | None:
    """The compute node feeding the user's op at quantization time (skipping q/dq)."""
    qs = ctx.users().quantized
    q = f.quantized
    if qs is None or q is None:
        return None
    nm = qs.node_map()
    cur = q
    for _ in range(8):
        src = next((nm[i] for i in cur.inputs if i in nm and nm[i].fx_op == "call_function"), None)
        if src is None:
            return None
        if "quantize" not in op_base_name(src.target) and not src.target.endswith("getitem"):
            return src
        cur = src
    return None


def _fusion(ctx: FallbackContext, f: Facts, base: str) -> tuple[str, str]:
    m = re.search(r"input node (\S+) is not a supported fused activation op", " ".join(f.warnings))
    what = ""
    if m:
        src = next((s.node(m.group(1)) for s in ctx.snapshots if s.node(m.group(1))), None)
        what = src.target.rsplit(".", 1)[0] if src else m.group(1)
        if src is not None and op_base_name(src.target) == "quantize_per_tensor":
            what += ", the end of a float island"
    producer = _producer_at_q(ctx, f)
    msg = (f"This {base} — {at_q(f)} — could not be fused into the op before it"
           + (f" (its input is {what}, not a conv, linear or add kernel)" if what else "")
           + f", so it runs as a separate portable {f.node.dtype or 'int8'} kernel.")
    return msg, suggestion_for_activation(producer.target if producer is not None else None)


def _not_annotated(f: Facts, base: str) -> str:
    q = f.quantized
    qbase = op_base_name(q.target) if q is not None else base
    if qbase == "matmul":
        return (f"{at_q(f)} has broadcasting batch dims: MatmulToBmmPass (run before annotation) "
                "rewrites only a matmul whose batch dims already match, so the quantizer saw aten.matmul, "
                f"for which it has no pattern (it has one for bmm); to_edge split it into {base} afterwards, "
                f"which runs {float_where(f)} on a portable fp32 kernel.")
    if qbase in ("relu6", "relu6_"):
        return (f"{at_q(f)} has no Cortex-M quantizer pattern (conv2d/linear/add + hardtanh has one, relu6 "
                f"has none), so it was never quantized; to_edge turned it into {base} later, which runs "
                f"{float_where(f)} on a portable fp32 kernel.")
    return (f"The Cortex-M quantizer has no pattern for {at_q(f)}, so it stays {float_where(f)} and runs "
            f"on a portable fp32 kernel{later_text(f)}.")


def _scalar_read(f: Facts) -> str:
    """`.item()` / `aten._local_scalar_dense`: a Python number read from a tensor while the program runs."""
    q = f.quantized
    where = f" at {q.source.short}" if q is not None and q.source else ""
    return (f"{at_q(f)}{where} reads a Python scalar out of a tensor while the program runs (`.item()`, "
            f"exported as aten._local_scalar_dense): its value depends on data, so export cannot make it a "
            f"constant, the quantizer cannot quantize it, and a portable kernel copies it out on every inference "
            f"(in a detection head: the anchors' strides or grid sizes).")


def _piece_of_float_op(f: Facts, base: str, qbase: str) -> bool:
    """A bool/integer node to_edge made out of a float op the user wrote (PReLU's `x > 0`, the attention
    mask's eq/logical_not/any inside scaled_dot_product_attention): part of that op, not index arithmetic."""
    q = f.quantized
    # bool: a comparison or mask over the op's activations; int64 pieces (a pad's or a window's index
    # arithmetic on positions) are index arithmetic
    return (q is not None and qbase != base and (q.dtype or "").startswith("float")
            and (f.node.dtype or "") == "bool")


_PIECES = {
    "prelu": ("`x > 0`, a multiply by the slope and a where", "Replace PReLU by ReLU (it fuses into the "
              "conv before it) if the accuracy allows; otherwise the PReLU stays a float island."),
    "scaled_dot_product_attention": (
        "matmuls, a softmax and its attention-mask handling (eq/logical_not/any: which rows are fully masked)",
        "scaled_dot_product_attention has no Cortex-M pattern: with attn_implementation=\"eager\" its "
        "matmuls become bmm the quantizer annotates (ExecuTorch 1.5.1's ReplaceScalarWithTensorArgPass then "
        "fails on them: lower with --keep-going), or accept the float island."),
}


def decomposed_float_op(f: Facts, base: str, qbase: str) -> tuple[str, str]:
    """One reason for every node a float user op became, whatever piece this node is (the group's
    message must not say "this eq" for its logical_not)."""
    pieces, fix = _PIECES.get(qbase, ("several portable ops", ""))
    return (f"The Cortex-M quantizer has no pattern for {at_q(f)}, so it stays in float; to_edge decomposed "
            f"it into {pieces}, which all run on portable kernels. Its bool/integer steps work on "
            f"activation-sized tensors: they are part of the {qbase}, not cheap index arithmetic."), fix


def _quarantined(ctx: FallbackContext, q: NodeSnapshot | None) -> dict[str, Any] | None:
    """Why --keep-going left the user's op in float: by its node name or its nn.Module ("module:NAME")."""
    if q is None:
        return None
    table = ctx.verdicts.get("quarantined") or {}
    if q.name in table:
        return table[q.name]
    for key, why in table.items():
        mod = key[len("module:"):] if key.startswith("module:") else None
        if mod and (q.module_path == mod or q.module_path.startswith(mod + ".")):
            return why
    return None


def explain_node(ctx: FallbackContext, node: NodeSnapshot) -> FallbackReason:
    q = ctx.users().quantized_node(node)
    f = gather(ctx.snapshots, ctx.prov(), ctx.verdicts, ctx.supported_targets, node, q)
    evidence = evidence_lines(f, bool(ctx.supported_targets))
    base = op_base_name(node.target)
    qbase = op_base_name(q.target) if q is not None else base
    stage = ctx.prov().last_touched(node.id, len(ctx.snapshots) - 1)
    suggestion = ""
    dtype_words = " ".join(f.rejected + f.limits).lower()
    fuse_warn = any("Cannot fuse activation" in w for w in f.warnings)

    quarantined = _quarantined(ctx, q)
    qsnap = ctx.users().quantized
    if quarantined is not None:
        cat = "pass_failure"
        msg = pass_failure_text(f, quarantined, node)
    elif base == "_local_scalar_dense" or qbase in ("item", "_local_scalar_dense"):
        cat = "data_dependent_scalar"
        msg = _scalar_read(f)
    elif q is not None and qsnap is not None and reads_only_parameters(qsnap, q):
        cat = "parameter_computation"
        msg, suggestion = parameter_computation_text(f, q, node)
    elif q is not None and q.module_type in RNN_MODULES:
        cat = "unsupported_module"
        msg = rnn_module_text(f, q)
    elif f.int_out and not f.has_qparams and _piece_of_float_op(f, base, qbase):
        cat = "not_annotated"
        msg, suggestion = decomposed_float_op(f, base, qbase)
    elif f.int_out and not f.has_qparams:
        cat = "integer_arithmetic"
        what = (f"{at_q(f)} computes" if qbase == base else
                f"to_edge decomposed {at_q(f)} into index arithmetic: this {base} computes")
        msg = (f"{what} on {node.dtype} integers (inputs {f.input_dtypes or ['constants']}), such as "
               f"arange/abs/sub on positions: integer tensors are not quantized and there is no Cortex-M kernel "
               f"for them, so it runs on a portable {node.dtype} kernel — usually cheap, no multiply-accumulate "
               f"work on activations.")
    elif f.layout_limited and ctx.flow == "legacy" and not (f.has_qparams and not f.float_out):
        cat = "layout"
        msg = (f"The quantizer rejected {at_q(f)} for its memory layout ({f.limits[0]}), so it runs "
               f"{float_where(f)} on a portable kernel: {LAYOUT_FIX}.")
    elif fuse_warn and qbase in ACTIVATIONS and not f.not_annotated:
        cat = "activation_not_fused"
        msg, suggestion = _fusion(ctx, f, base)
    elif (node.dtype or "") == "int16" or "quantization config" in dtype_words or "int16" in dtype_words:
        cat = "unsupported_dtype"
        detail = "; ".join(x for x in ((f"checker: \"{f.rejected[0]}\"" if f.rejected else ""),
                                       (f"limit hit: {f.limits[0]}" if f.limits else "")) if x)
        msg = (f"{at_q(f)} was configured with a dtype the Cortex-M kernels do not accept for it"
               + (f" ({detail})" if detail else "")
               + f", so it stays in {'float' if f.float_out else node.dtype} on a portable kernel.")
    elif f.float_out and (fold := why_not_folded(ctx.snapshots, q)) is not None:
        cat = "not_annotated"            # a batch norm prepare_pt2e did not fold: why, and how it folds
        msg, suggestion = fold
    elif f.rejected and all(SHARED_FLOAT in r for r in f.rejected):
        cat = "not_annotated"
        producer = _producer_at_q(ctx, f)
        msg = (f"{at_q(f)} has no quantizer pattern of its own: it only shares its neighbours' quantization "
               f"(SharedQspecQuantizer), and they are float here (\"{f.rejected[0]}\"), so it stays "
               f"{float_where(f)} on a portable fp32 kernel{later_text(f)}.")
        suggestion = ("Quantize its neighbours first: fix the fallback of the op before it"
                      + (f" ({producer.target} `{producer.name}`)" if producer is not None else "")
                      + "; this op then shares their int8 quantization.")
    elif f.rejected:
        cat = "rejected_by_quantizer"
        limit = f"; limit hit: {'; '.join(f.limits)}" if f.limits else ""
        msg = (f"The quantizer's pattern check rejected {at_q(f)}: \"{f.rejected[0]}\"{limit}. So it was "
               f"left in {'float' if f.float_out else node.dtype} on a portable kernel{later_text(f)}.")
    elif f.float_out and (f.not_annotated or not f.has_qparams):
        cat = "not_annotated"
        msg = _not_annotated(f, base)
        if qbase != base and qbase in _PIECES:      # the float pieces of the same op: the same one reason
            msg, suggestion = decomposed_float_op(f, base, qbase)
    elif f.has_qparams and not f.float_out:
        cat = "no_cortex_m_rewrite"
        flag_txt = ", ".join(f.flags)
        if flag_txt:
            msg = (f"{at_q(f)} was quantized, but a pattern checker flagged it ({flag_txt}) so "
                   f"AtenToCortexMPass kept the portable int8 {base} kernel.")
        elif f.has_substitution:
            msg = (f"{at_q(f)} was quantized, but AtenToCortexMPass declined to rewrite this {base} "
                   f"configuration for {ctx.target}, so a portable int8 kernel runs it.")
        else:
            msg = (f"{at_q(f)} was quantized to {node.dtype}, but there is no Cortex-M kernel for {base}, so "
                   f"a portable int8 kernel runs it.")
    else:
        cat = "unknown"
        msg = f"No rule explains why {at_q(f)} stayed on a portable kernel; see the evidence."
    if cat != "unsupported_module":         # a module's one explanation covers its moves too
        msg += move_cost(node, base)
    if ctx.flow == "explicit" and cat in ("rejected_by_quantizer", "unknown") and "nhwc" in " ".join(f.warnings).lower():
        cat = "layout"
    if not suggestion:
        suggestion = suggestion_for(qbase, cat, base, q.args if q is not None else None)
        if cat == "layout" and ctx.flow == "legacy":
            suggestion = f"Feed the model channels-last: {LAYOUT_FIX} (or re-lower with --channels-last)."
    user_op = ctx.users().user_op(node)
    return FallbackReason(category=cat, message=msg, evidence=tuple(evidence), suggestion=suggestion,
                          stage=stage, user_op=user_op, group=group_id(user_op, node))


def _is_module_op(r: FallbackReason) -> bool:
    """The node that is the module itself at quantization time (aten.lstm for an nn.LSTM)."""
    uo = r.user_op
    return uo is not None and op_base_name(uo.target) == uo.module_type.lower()


def _grouped(reasons: dict[str, FallbackReason], targets: dict[str, str]) -> dict[str, FallbackReason]:
    """Nodes of one group get one explanation (the group's first), naming how many nodes it became."""
    by_group: dict[tuple[str, str], list[str]] = {}
    for nid, r in reasons.items():       # one explanation per group and category
        by_group.setdefault((r.group, r.category), []).append(nid)
    out = dict(reasons)
    for members in by_group.values():
        if len(members) < 2:
            continue
        lead = reasons[next((m for m in members if _is_module_op(reasons[m])), members[0])]
        ops = sorted({op_base_name(targets[m]) for m in members})
        note = (f" (one explanation for the {len(members)} portable nodes it became: "
                f"{', '.join(ops[:8])}{', …' if len(ops) > 8 else ''})")
        for nid in members:
            r = reasons[nid]
            own_op = r.user_op.target if r.user_op else ""
            msg = lead.message.rstrip(".") + note + "."
            if own_op and r.user_op and lead.user_op and own_op != lead.user_op.target:
                msg += f" This node: {own_op} at quantization time."
            out[nid] = replace(r, message=msg, suggestion=lead.suggestion)
    return out


def explain_fallbacks(ctx: FallbackContext) -> GraphSnapshot:
    """The final snapshot with a FallbackReason on every portable compute node."""
    final = ctx.snapshots[-1]
    reasons = {n.id: explain_node(ctx, n) for n in final.nodes if n.kind == KIND_FALLBACK}
    reasons = _grouped(reasons, {n.id: n.target for n in final.nodes})
    nodes = tuple(replace(n, fallback=reasons[n.id]) if n.id in reasons else n for n in final.nodes)
    return replace(final, nodes=nodes)
