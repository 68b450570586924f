"""A comparison of N sides (matched rows + deltas against side 0) and its JSON form.

`compare_to_dict` is the documented format (docs/json-format.md, "compare"): the HTML report, the
app's side-by-side view and other tools read it; `reports=True` also embeds each side's full
lowering report (its graphs per stage), so one file holds everything an interactive view needs."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from backend_core.orchestration.compare.deltas import all_deltas
from backend_core.orchestration.compare.facts import PROV_WEAK, SideFacts
from backend_core.orchestration.compare.matching import match_sides
from backend_core.orchestration.compare.qparams import DEFAULT_RTOL
from backend_core.orchestration.compare.rows import RowView, build_rows

COMPARE_FORMAT = "cmlens-compare"
COMPARE_VERSION = 1


@dataclass
class Comparison:
    sides: list[SideFacts]
    rows: list[RowView]
    reference: int                                  # the side the matching started from
    deltas: list[dict[str, Any]]                    # side i (1..N-1) against side 0
    rtol: float = DEFAULT_RTOL
    notes: list[str] = field(default_factory=list)
    reports: list[dict[str, Any] | None] = field(default_factory=list)

    @property
    def weak(self) -> bool:
        return any(s.provenance == PROV_WEAK for s in self.sides)


def compare_facts(sides: list[SideFacts], rtol: float = DEFAULT_RTOL,
                  reports: list[dict[str, Any] | None] | None = None) -> Comparison:
    """Match, build rows, compute deltas. Pure: no ExecuTorch, no files."""
    matched, ref = match_sides(sides)
    rows = build_rows(sides, matched, rtol)
    notes = []
    for i, s in enumerate(sides):
        if s.provenance == PROV_WEAK:
            notes.append(f"side {i + 1} ({s.label}) carries no provenance (a bare program: no module path, no "
                         f"source line, no op at quantisation time): its ops were matched to side {ref + 1} "
                         "by operator order, op and output shape. That match is weaker than by the op the user "
                         "wrote, and ops fused or removed by the lowering cannot be seen on it.")
        notes.extend(f"side {i + 1}: {n}" for n in s.notes)
    versions = {str(s.versions["executorch"]) for s in sides if s.versions.get("executorch")}
    if len(versions) > 1:
        notes.append("the sides were lowered with different ExecuTorch versions: " + ", ".join(sorted(versions)))
    return Comparison(sides, rows, ref, all_deltas(rows, sides), rtol, notes, list(reports or [None] * len(sides)))


def _side_summary(s: SideFacts) -> dict[str, Any]:
    d = s.to_dict()
    d.pop("groups")
    d["counts"] = {}
    for g in s.groups:
        d["counts"][g.status] = d["counts"].get(g.status, 0) + 1
    d["fallbacks"] = [{"label": g.label(), "op": g.op, "module": g.module, "source": g.source,
                       "category": g.category, "reason": g.reason, "nodes": [n.id for n in g.nodes]}
                      for g in s.fallback_groups()]
    return d


def compare_to_dict(c: Comparison, *, reports: bool = False) -> dict[str, Any]:
    """The compare JSON (format `cmlens-compare`, version 1)."""
    out: dict[str, Any] = {
        "format": COMPARE_FORMAT, "version": COMPARE_VERSION, "qparams_rtol": c.rtol,
        "reference": c.reference, "weak_match": c.weak, "notes": list(c.notes),
        "sides": [_side_summary(s) for s in c.sides],
        "rows": [asdict(r) for r in c.rows],
        "deltas": c.deltas,
    }
    if reports:
        out["reports"] = c.reports
    return out
