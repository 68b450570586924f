"""Explain every portable compute fallback in the final graph with a FallbackReason record.

Evidence comes from: the QuantizerReporter's verdicts (accepted / rejected with the checker's
words / never annotated), the q/dq boundary around the node, its qparams and output dtype,
`meta["custom"]["cortex_m"]` flags, the warnings Cortex-M passes logged naming it, whether
AtenToCortexMPass has a substitution for its target, and the stage that last touched it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..provenance import Provenance
from ..snapshot.classify import op_base_name
from ..snapshot.model import KIND_FALLBACK, KIND_QUANT, FallbackReason, GraphSnapshot, NodeSnapshot
from .suggestions import suggestion_for

CATEGORIES = {
    "not_annotated": "not annotated by the quantizer",
    "rejected_by_quantizer": "rejected by a quantizer pattern check",
    "no_cortex_m_rewrite": "quantized, but no Cortex-M rewrite for this target",
    "activation_not_fused": "activation could not be fused",
    "unsupported_dtype": "unsupported dtype",
    "layout": "layout",
    "unknown": "unknown (a gap)",
}


@dataclass
class FallbackContext:
    snapshots: list[GraphSnapshot]
    verdicts: dict[str, Any]                 # QuantizerVerdicts.to_dict()
    target: str
    flow: str
    supported_targets: frozenset[str] = frozenset()   # targets AtenToCortexMPass can rewrite
    provenance: Provenance | None = field(default=None)

    def prov(self) -> Provenance:
        if self.provenance is None:
            self.provenance = Provenance(self.snapshots)
        return self.provenance


def _names_across_stages(ctx: FallbackContext, node: NodeSnapshot) -> list[str]:
    """Every name the node had in earlier stages, plus from_node origins."""
    last = len(ctx.snapshots) - 1
    names = [node.id, *node.origin]
    for i, nid in ctx.prov().history(node.id, last):
        if nid and nid not in names:
            names.append(nid)
    return names


_SUBJECT = re.compile(r"(?:activation|node|Node)\s+['\"]?([A-Za-z_][\w.]*)")


def _warnings_naming(ctx: FallbackContext, names: list[str]) -> list[str]:
    """Pass warnings whose subject (the first node a message names) is this node."""
    out = []
    wanted = set(names)
    for snap in ctx.snapshots:
        for w in snap.log:
            m = _SUBJECT.search(w.split(": ", 1)[-1])
            if m and m.group(1) in wanted:
                out.append(f"[{snap.stage}] {w}")
    return out


def _boundary(final: GraphSnapshot, node: NodeSnapshot) -> tuple[bool, bool]:
    """(fed by a dequantize, feeds a quantize): the float island signature."""
    nm = final.node_map()
    fed = any(nm[i].kind == KIND_QUANT and op_base_name(nm[i].target).startswith("dequantize")
              for i in node.inputs if i in nm)
    feeds = any(e.src == node.id and nm[e.dst].kind == KIND_QUANT and
                not op_base_name(nm[e.dst].target).startswith("dequantize")
                for e in final.edges if e.dst in nm)
    if not feeds:  # through getitem
        getitems = [e.dst for e in final.edges if e.src == node.id and nm[e.dst].target.endswith("getitem")]
        feeds = any(e.src in getitems and nm[e.dst].kind == KIND_QUANT for e in final.edges)
    return fed, feeds


def explain_node(ctx: FallbackContext, node: NodeSnapshot) -> FallbackReason:
    final = ctx.snapshots[-1]
    v = ctx.verdicts
    names = _names_across_stages(ctx, node)
    rejected = [r for n in names for r in v.get("rejected", {}).get(n, [])]
    accepted = [v["accepted"][n] for n in names if n in v.get("accepted", {})]
    not_annotated = [n for n in names if n in set(v.get("not_annotated", []))]
    warnings = _warnings_naming(ctx, names)
    fed_by_dq, feeds_q = _boundary(final, node)
    base = op_base_name(node.target)
    float_out = (node.dtype or "").startswith("float")
    flags = dict(node.flags)
    # Only qparams that FoldAndAnnotateQParamsPass attached count: q/dq around a float op do not.
    has_qparams = any(q.source == "meta" for _, q in node.input_qparams) or (
        node.output_qparams is not None and node.output_qparams.source == "meta")

    evidence: list[str] = [f"final graph: {node.target} with {node.dtype or '?'} output"
                           + (f" {list(node.shape)}" if node.shape else "")]
    if rejected:
        evidence += [f"QuantizerReporter rejected it: {r!r}" for r in dict.fromkeys(rejected)]
    if accepted:
        evidence.append(f"QuantizerReporter accepted it ({accepted[0]})")
    if not_annotated:
        evidence.append(f"QuantizerReporter lists {not_annotated[0]!r} under 'Non annotated nodes'")
    if fed_by_dq or feeds_q:
        evidence.append("sits between " + " and ".join(
            x for x, c in (("a dequantize", fed_by_dq), ("a quantize", feeds_q)) if c) + " (a float island)")
    evidence.append("input/output qparams after folding: " + ("present" if has_qparams else "none"))
    if flags:
        evidence += [f"meta flag {k}={val}" for k, val in flags.items() if k.startswith("cortex_m.")]
    evidence += [f"pass warning {w}" for w in warnings]
    if ctx.supported_targets:
        has_sub = node.target in ctx.supported_targets
        evidence.append(f"AtenToCortexMPass {'has' if has_sub else 'has no'} substitution for {node.target}")
    else:
        has_sub = False
    stage = ctx.prov().last_touched(node.id, len(ctx.snapshots) - 1)

    dtype_words = " ".join(rejected).lower()
    fuse_warn = [w for w in warnings if "Cannot fuse activation" in w]
    if fuse_warn:
        cat = "activation_not_fused"
        m = re.search(r"input node (\S+) is not a supported fused activation op", fuse_warn[0])
        producer = ""
        if m:
            src = next((s.node(m.group(1)) for s in ctx.snapshots if s.node(m.group(1))), None)
            what = src.target.rsplit(".", 1)[0] if src else m.group(1)
            if src is not None and "quantize_per_tensor" in src.target:
                what += ", the end of a float island"
            producer = f" (its input is {what}, not a conv, linear or add kernel)"
        msg = (f"This {base} could not be fused into the op before it{producer}, so it runs as a "
               f"separate portable {node.dtype or 'int8'} kernel.")
    elif (node.dtype or "") == "int16" or "quantization config" in dtype_words or "int16" in dtype_words:
        cat = "unsupported_dtype"
        msg = (f"{base} was configured with a dtype the Cortex-M kernels do not accept for it"
               + (f" (checker: \"{rejected[0]}\")" if rejected else "")
               + f", so it stays in {'float' if float_out else node.dtype} on a portable kernel.")
    elif rejected and any(w in dtype_words for w in ("nhwc", "layout", "channels_last", "channels-last")):
        cat = "layout"
        msg = f"{base} was rejected for its memory layout: {rejected[0]}"
    elif rejected:
        cat = "rejected_by_quantizer"
        msg = (f"The quantizer's pattern check rejected this {base}: \"{rejected[0]}\", so it was left "
               f"in {'float' if float_out else node.dtype} on a portable kernel.")
    elif float_out and (not_annotated or not has_qparams):
        cat = "not_annotated"
        msg = (f"The Cortex-M quantizer has no pattern for {base}, so it stays in float and runs on a "
               f"portable fp32 kernel between a dequantize and a quantize.")
    elif has_qparams and not float_out:
        cat = "no_cortex_m_rewrite"
        flag_txt = ", ".join(k for k in flags if k.startswith("cortex_m."))
        if flag_txt:
            msg = (f"{base} was quantized, but a pattern checker flagged it ({flag_txt}) so "
                   f"AtenToCortexMPass kept the portable int8 kernel.")
        elif has_sub:
            msg = (f"{base} was quantized, but AtenToCortexMPass declined to rewrite this configuration "
                   f"for {ctx.target}, so a portable int8 kernel runs it.")
        else:
            msg = (f"{base} was quantized to {node.dtype}, but there is no Cortex-M kernel for it, so a "
                   f"portable int8 kernel runs it.")
    else:
        cat = "unknown"
        msg = f"No rule explains why {base} stayed on a portable kernel; see the evidence."
    if ctx.flow == "explicit" and cat in ("rejected_by_quantizer", "unknown") and "nhwc" in " ".join(warnings).lower():
        cat = "layout"
    return FallbackReason(category=cat, message=msg, evidence=tuple(evidence),
                          suggestion=suggestion_for(base, cat), stage=stage)


def explain_fallbacks(ctx: FallbackContext) -> GraphSnapshot:
    """The final snapshot with a FallbackReason on every portable compute node."""
    final = ctx.snapshots[-1]
    nodes = tuple(replace(n, fallback=explain_node(ctx, n)) if n.kind == KIND_FALLBACK else n
                  for n in final.nodes)
    return replace(final, nodes=nodes)
