"""One lowering report (docs/json-format.md) -> the data the page embeds: each stage's laid-out graph
and its node records, the final program's memory and cost per node, fallbacks and pre-flight findings.

Stages repeat most of their nodes (a pass changes a few), so node records and graph layouts are stored
once and stages refer to them by index: ds_cnn's 12 stages need 138 distinct records, not 1,080.
"""
from __future__ import annotations

import json
from typing import Any

from backend_core.analyses.report.json_report import snapshots_from_report
from backend_core.analyses.report.interactive.graphs import stage_graph
from backend_core.analyses.report.interactive.nodes import node_record
from backend_core.analyses.report.interactive.overlays import cost_by_node, memory_by_node, profile_of


class _Table:
    """Distinct JSON-able records, each stored once; `add` returns its index."""

    def __init__(self) -> None:
        self.rows: list[Any] = []
        self._index: dict[str, int] = {}

    def add(self, row: Any) -> int:
        key = json.dumps(row, sort_keys=True, default=str)
        i = self._index.get(key)
        if i is None:
            i = self._index[key] = len(self.rows)
            self.rows.append(row)
        return i


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    mem = report.get("memory") or {}
    out: dict[str, Any] = {"fallbacks": len(report.get("fallbacks") or []),
                           "preflight": len(report.get("preflight") or [])}
    for k in ("arena_bytes", "pte_bytes", "constant_bytes", "peak_op", "peak_bytes"):
        if mem.get(k) is not None:
            out[k] = mem[k]
    if (mem.get("method_allocator") or {}).get("used") is not None:
        out["method_allocator_used"] = mem["method_allocator"]["used"]
    return out


def lowering_bundle(report: dict[str, Any], *, label: str = "") -> dict[str, Any]:
    """Everything the viewer needs of one lowering; `label` names it in a compare ("M4", "A"...)."""
    snaps = snapshots_from_report(report)
    nodes, graphs = _Table(), _Table()
    layout_of: dict[str, int] = {}            # content hash -> graphs index (unchanged passes share one)
    stages = []
    for st, snap in zip(report["stages"], snaps):
        key = snap.content_hash()
        if key not in layout_of:
            layout_of[key] = graphs.add(stage_graph(snap))
        stages.append({
            "name": st["name"], "index": st["index"], "kind": st["kind"], "changed": st.get("changed", True),
            "seconds": st.get("seconds", 0.0), "counts": st.get("counts", {}), "log": list(st.get("log") or []),
            "graph": layout_of[key], "nodes": [nodes.add(node_record(n)) for n in st["nodes"]],
            "added": [a["node"] for a in st.get("added") or []],
            "removed": [r["node"] for r in st.get("removed") or []],
            "rewritten": [[r["from"], r["to"]] for r in st.get("rewritten") or []],
        })
    final = snaps[-1] if snaps else None
    prof = profile_of(report)
    pre: dict[str, list[dict[str, Any]]] = {}
    for f in report.get("preflight") or []:
        pre.setdefault(f.get("node") or "", []).append(
            {k: f.get(k) for k in ("rule", "certainty", "message", "fix", "evidence", "source") if f.get(k)})
    opts = report.get("options") or {}
    return {
        "label": label or report.get("model", ""), "model": report.get("model", ""),
        "source": report.get("source", ""), "target": report.get("target", ""), "flow": report.get("flow", ""),
        "status": report.get("status", ""), "error": report.get("error"),
        "options": {k: opts[k] for k in ("channels_last", "activations", "calib") if opts.get(k) is not None},
        "versions": {k: v for k, v in (report.get("versions") or {}).items() if k in ("executorch", "torch")},
        "stages": stages, "graphs": graphs.rows, "nodes": nodes.rows,
        "fallbacks": [{k: f.get(k) for k in ("node", "op", "category", "reason", "source")}
                      for f in report.get("fallbacks") or []],
        "preflight": pre,
        "memory": memory_by_node(report.get("memory")),
        "cost": cost_by_node(final, prof) if final is not None else {},
        "profile_unit": ((prof or {}).get("unit_info") or {}).get("label", "") if prof else "",
        "summary": _summary(report),
    }


def empty_bundle(label: str, side: dict[str, Any] | None = None) -> dict[str, Any]:
    """A compare side without a lowering report (a baseline file): named, but with no graph."""
    side = side or {}
    return {"label": label, "model": side.get("model", ""), "source": side.get("source", ""),
            "target": side.get("target", ""), "flow": side.get("flow", ""), "status": "no graph",
            "error": None, "options": {}, "versions": {}, "stages": [], "graphs": [], "nodes": [],
            "fallbacks": [], "preflight": {}, "memory": {}, "cost": {}, "profile_unit": "",
            "summary": {"fallbacks": len(side.get("fallbacks") or []), "preflight": 0}}
