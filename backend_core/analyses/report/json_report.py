"""The JSON report: model, target, flow, status, stages (nodes, edges, added/removed/rewritten),
fallbacks with reasons, the quantizer's verdicts. Lossless: `result_from_dict` rebuilds the
snapshots from it, which is also how the cache and the GUI worker move results around."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from backend_core.common.diff import diff_all
from backend_core.common.snapshot.model import KIND_FALLBACK, GraphSnapshot, snapshot_from_dict

SCHEMA_VERSION = 1


def node_entry(n_dict: dict[str, Any]) -> dict[str, Any]:
    """A snapshot node dict plus `op` (the target as ExecuTorch prints it) and `qparams`."""
    out = dict(n_dict)
    out["op"] = n_dict["target"]
    qp: dict[str, Any] = {}
    if n_dict.get("input_qparams"):
        qp["inputs"] = {str(i): q for i, q in n_dict["input_qparams"]}
    if n_dict.get("output_qparams"):
        qp["output"] = n_dict["output_qparams"]
    if n_dict.get("requant"):
        qp["requant"] = n_dict["requant"]
    out["qparams"] = qp
    if out.get("fallback") is None:
        out.pop("fallback", None)
    return out


def fallback_rows(final: GraphSnapshot) -> list[dict[str, Any]]:
    rows = []
    for n in final.nodes:
        if n.kind == KIND_FALLBACK and n.fallback is not None:
            rows.append({"node": n.id, "op": n.target, "category": n.fallback.category,
                         "reason": n.fallback.message, "evidence": list(n.fallback.evidence),
                         "suggestion": n.fallback.suggestion, "stage": n.fallback.stage,
                         "module_path": n.module_path,
                         "source": n.source.full if n.source else None,
                         "user_op": asdict(n.fallback.user_op) if n.fallback.user_op else None,
                         "group": n.fallback.group, "verified": n.fallback.verified,
                         "verification": n.fallback.verification})
    return rows


@dataclass(frozen=True)
class ReportSubject:
    """What a report is about: a lowering's identity, its stages and the quantizer's verdicts (a lowering,
    an artefact read back, the window's session each give one: one value, not a dozen arguments)."""
    model: str
    source: str
    target: str
    flow: str
    status: str
    snapshots: list[GraphSnapshot]
    verdicts: dict[str, Any] = field(default_factory=dict)
    error: dict | None = None
    planned_stages: list[str] | None = None
    options: dict[str, Any] | None = None


def build_report(subject: ReportSubject, *, versions: dict[str, str], files: dict[str, str] | None = None,
                 with_graphs: bool = True) -> dict[str, Any]:
    """`with_graphs=False` leaves out nodes/edges (a summary: counts, diffs, fallbacks)."""
    model, source, target, flow, status = (subject.model, subject.source, subject.target, subject.flow,
                                           subject.status)
    snapshots, verdicts, error = subject.snapshots, subject.verdicts, subject.error
    planned_stages, options = subject.planned_stages, subject.options
    diffs = diff_all(snapshots)
    stages = []
    for snap, d in zip(snapshots, diffs):
        if with_graphs:
            sd = snap.to_dict()
            sd["nodes"] = [node_entry(n) for n in sd["nodes"]]
        else:
            sd = {"stage": snap.stage, "index": snap.index, "kind": snap.kind, "seconds": snap.seconds,
                  "changed": snap.changed, "runnable_on_host": snap.runnable_on_host, "log": list(snap.log)}
        sd["name"] = snap.stage
        sd["node_count"] = len(snap.nodes)
        sd["counts"] = snap.count_by_kind()
        dd = d.to_dict(snapshots[snap.index - 1], snap) if d else {"added": [], "removed": [],
                                                                      "rewritten": [], "modified": []}
        sd.update(dd)
        stages.append(sd)
    final_done = status == "done" and snapshots and snapshots[-1].kind == "final"
    report = {
        "schema": SCHEMA_VERSION, "model": model, "source": source, "target": target, "flow": flow,
        "status": status, "error": error, "versions": versions, "files": files or {},
        "options": options or {"channels_last": False, "verify_suggestions": False},
        "planned_stages": planned_stages or [s.stage for s in snapshots],
        "stages": stages,
        "fallbacks": fallback_rows(snapshots[-1]) if final_done else [],
        "preflight": list(snapshots[-1].extra.get("preflight", [])) if final_done else [],
        "quantizer": verdicts,
    }
    if status == "cancelled":      # stopped by the user: what was reached, and no claim about a final graph
        planned = planned_stages or [s.stage for s in snapshots]
        report["cancelled"] = {"stage_reached": snapshots[-1].stage if snapshots else None,
                               "stages_done": len(snapshots), "stages_planned": len(planned)}
        report["fallbacks"] = report["preflight"] = None
    return report


def snapshots_from_report(report: dict[str, Any]) -> list[GraphSnapshot]:
    out = []
    for st in report["stages"]:
        d = {k: v for k, v in st.items() if k not in ("name", "counts", "node_count", "added", "removed",
                                                     "rewritten", "modified")}
        d["nodes"] = [{k: v for k, v in n.items() if k not in ("op", "qparams")} for n in st["nodes"]]
        out.append(snapshot_from_dict(d))
    return out
