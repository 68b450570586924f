"""The compare JSON (`cmlens compare --json F --with-reports`, docs/json-format.md) read for the
side-by-side view: per side its final graph, and per row the nodes it covers on every side and
how it changed. Pure data, no widgets: the view and the tests read the same lookups."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.analyses.report.json_report import snapshots_from_report
from backend_core.common.snapshot.model import GraphSnapshot

# how a row changed against side 1, strongest first (the colour of its nodes)
NEW_FALLBACK = "new fallback"
FALLBACK_GONE = "fallback gone"
CHANGED = "changed"
SAME = "same"
DELTA_COLORS = {NEW_FALLBACK: "#ef9a9a", FALLBACK_GONE: "#a5d6a7", CHANGED: "#ffe082"}
DELTA_RANK = {NEW_FALLBACK: 3, FALLBACK_GONE: 2, CHANGED: 1, SAME: 0}


@dataclass
class CompareSide:
    label: str
    snapshot: GraphSnapshot | None          # the final graph (None: a baseline side has no graph)
    row_of_node: dict[str, int] = field(default_factory=dict)


@dataclass
class CompareData:
    raw: dict[str, Any]
    sides: list[CompareSide]
    rows: list[dict[str, Any]]
    delta: list[str]                         # per row: NEW_FALLBACK | FALLBACK_GONE | CHANGED | SAME

    def nodes(self, row: int, side: int) -> list[str]:
        """The final nodes of `row` on `side` (several: one-to-many; none: absent or fused away)."""
        cell = self.rows[row]["cells"][side]
        if not cell:
            return []
        if not cell["nodes"] and cell.get("fused_into"):      # many-to-one: show the op it was folded into
            host = next((r for r in self.rows if r["label"] == cell["fused_into"]), None)
            hc = host["cells"][side] if host else None
            return list(hc["nodes"]) if hc else []
        return list(cell["nodes"])

    def changed_rows(self) -> list[int]:
        return [i for i, r in enumerate(self.rows) if r["change"] != "same" or self.delta[i] != SAME]

    def change_text(self, row: int) -> str:
        r = self.rows[row]
        parts = []
        for s, ch in enumerate(r["changes"]):
            if ch:
                parts.append(f"side {s + 1}: " + "; ".join(ch))
        what = self.delta[row] if self.delta[row] != SAME else r["change"]
        where = f"  ({r['source'].rsplit('/', 1)[-1]})" if r.get("source") else ""
        return f"[{what}] {r['label']}{where} — " + (" | ".join(parts) or r["change"])


def row_delta(row: dict[str, Any]) -> str:
    """The strongest change of a row over sides 2..N against side 1."""
    cells = row["cells"]
    base = cells[0]
    best = SAME
    for s in range(1, len(cells)):
        c = cells[s]
        b_fb = base is not None and base["status"] == "fallback"
        c_fb = c is not None and c["status"] == "fallback"
        if c_fb and not b_fb:
            d = NEW_FALLBACK
        elif b_fb and not c_fb and c is not None:
            d = FALLBACK_GONE
        elif row["changes"][s]:
            d = CHANGED
        else:
            d = SAME
        if DELTA_RANK[d] > DELTA_RANK[best]:
            best = d
    return best


def read_compare(data: dict[str, Any]) -> CompareData:
    """Index a compare JSON; refuses another format with a message naming the fix."""
    if data.get("format") != "cmlens-compare":
        raise ValueError("not a `cmlens compare --json` file (format is not cmlens-compare): "
                         "write one with `cmlens compare A B --json F --with-reports`")
    reports = data.get("reports") or [None] * len(data["sides"])
    sides = []
    for i, s in enumerate(data["sides"]):
        rep = reports[i] if i < len(reports) else None
        snap = None
        if rep and rep.get("stages") and all("nodes" in st for st in rep["stages"]):
            snap = snapshots_from_report(rep)[-1]
        sides.append(CompareSide(s.get("label") or f"side {i + 1}", snap))
    rows = data["rows"]
    for i, r in enumerate(rows):
        for s, cell in enumerate(r["cells"]):
            for n in (cell or {}).get("nodes", ()):
                sides[s].row_of_node.setdefault(n, i)
    return CompareData(data, sides, rows, [row_delta(r) for r in rows])
