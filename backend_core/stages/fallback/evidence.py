"""The facts one fallback's reason is decided from, gathered once per node.

Sources: the QuantizerReporter's verdicts and the limits its rejected patterns hit (keyed by
quantization-time node names), the node at quantization time (`user_op`), the q/dq boundary
around the node in the final graph, its qparams and dtype, `meta["custom"]["cortex_m"]` flags,
pass warnings naming it, and whether AtenToCortexMPass has a substitution for its target.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from backend_core.common.provenance import Provenance
from backend_core.common.snapshot.classify import is_quant_boundary, op_base_name
from backend_core.common.snapshot.model import KIND_QUANT, GraphSnapshot, NodeSnapshot

INT_DTYPES = frozenset({"int64", "int32", "bool", "uint8"})
_SUBJECT = re.compile(r"(?:activation|node|Node)\s+['\"]?([A-Za-z_][\w.]*)")


@dataclass
class Facts:
    node: NodeSnapshot
    quantized: NodeSnapshot | None            # the node at quantization time
    names: list[str]                          # every name the node had, plus origins
    rejected: list[str] = field(default_factory=list)
    limits: list[str] = field(default_factory=list)
    layout_limited: bool = False
    accepted: list[str] = field(default_factory=list)
    not_annotated: bool = False
    warnings: list[str] = field(default_factory=list)
    fed_by_dq: bool = False
    feeds_q: bool = False
    has_qparams: bool = False
    has_substitution: bool = False
    flags: dict[str, str] = field(default_factory=dict)
    input_dtypes: list[str] = field(default_factory=list)

    @property
    def float_out(self) -> bool:
        return (self.node.dtype or "").startswith("float")

    @property
    def int_out(self) -> bool:
        return (self.node.dtype or "") in INT_DTYPES


def names_across_stages(snapshots: list[GraphSnapshot], prov: Provenance, node: NodeSnapshot) -> list[str]:
    last = len(snapshots) - 1
    names = [node.id, *node.origin]
    for _i, nid in prov.history(node.id, last):
        if nid and nid not in names:
            names.append(nid)
    return names


def warnings_naming(snapshots: list[GraphSnapshot], names: list[str]) -> list[str]:
    """Pass warnings whose subject (the first node a message names) is this node."""
    out = []
    wanted = set(names)
    for snap in snapshots:
        for w in snap.log:
            m = _SUBJECT.search(w.split(": ", 1)[-1])
            if m and m.group(1) in wanted:
                out.append(f"[{snap.stage}] {w}")
    return out


def boundary(final: GraphSnapshot, node: NodeSnapshot) -> tuple[bool, bool]:
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


def gather(snapshots: list[GraphSnapshot], prov: Provenance, verdicts: dict[str, Any],
           supported_targets: frozenset[str], node: NodeSnapshot,
           quantized: NodeSnapshot | None) -> Facts:
    final = snapshots[-1]
    names = names_across_stages(snapshots, prov, node)
    if quantized is not None and quantized.name not in names:
        names.append(quantized.name)
    rej = verdicts.get("rejected", {})
    lim = verdicts.get("limits", {})
    layout_nodes = set(verdicts.get("layout_limited", []))
    not_annot = set(verdicts.get("not_annotated", []))
    f = Facts(node=node, quantized=quantized, names=names)
    f.rejected = list(dict.fromkeys(r for n in names for r in rej.get(n, [])))
    f.limits = list(dict.fromkeys(x for n in names for x in lim.get(n, [])))
    f.layout_limited = any(n in layout_nodes for n in names)
    f.accepted = [verdicts["accepted"][n] for n in names if n in verdicts.get("accepted", {})]
    key = quantized.name if quantized is not None else None
    f.not_annotated = (key in not_annot) if key else any(n in not_annot for n in names)
    f.warnings = warnings_naming(snapshots, names)
    f.fed_by_dq, f.feeds_q = boundary(final, node)
    # Only qparams that FoldAndAnnotateQParamsPass attached count: q/dq around a float op do not.
    f.has_qparams = any(q.source == "meta" for _, q in node.input_qparams) or (
        node.output_qparams is not None and node.output_qparams.source == "meta")
    f.has_substitution = bool(supported_targets) and node.target in supported_targets
    f.flags = {k: v for k, v in node.flags if k.startswith("cortex_m.")}
    nm = final.node_map()
    f.input_dtypes = [nm[i].dtype or "?" for i in node.inputs if i in nm and nm[i].kind != "weight"
                      and not is_quant_boundary(nm[i].target)]
    return f


def evidence_lines(f: Facts, supported_known: bool) -> list[str]:
    n = f.node
    ev = [f"final graph: {n.target} with {n.dtype or '?'} output" + (f" {list(n.shape)}" if n.shape else "")]
    q = f.quantized
    if q is not None:
        where = ", ".join(x for x in (f"module {q.module_path} ({q.module_type})" if q.module_path else "",
                                      q.source.full if q.source else "") if x)
        ev.append(f"at quantization time: {q.target} `{q.name}`" + (f" [{where}]" if where else ""))
    ev += [f"QuantizerReporter rejected it: {r!r}" for r in f.rejected]
    ev += [f"limit hit: {x}" for x in f.limits]
    if f.accepted:
        ev.append(f"QuantizerReporter accepted it ({f.accepted[0]})")
    if f.not_annotated:
        ev.append(f"QuantizerReporter lists {(q.name if q else f.names[0])!r} under 'Non annotated nodes'")
    if f.fed_by_dq or f.feeds_q:
        ev.append("sits between " + " and ".join(
            x for x, c in (("a dequantize", f.fed_by_dq), ("a quantize", f.feeds_q)) if c) + " (a float island)")
    ev.append("input/output qparams after folding: " + ("present" if f.has_qparams else "none"))
    if f.int_out or any(d in INT_DTYPES for d in f.input_dtypes):
        ev.append(f"integer data: inputs {f.input_dtypes or ['(constants)']}, output {n.dtype}")
    ev += [f"meta flag {k}={v}" for k, v in f.flags.items()]
    ev += [f"pass warning {w}" for w in f.warnings]
    if supported_known:
        ev.append(f"AtenToCortexMPass {'has' if f.has_substitution else 'has no'} substitution for {n.target}")
    return ev
