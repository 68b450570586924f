"""Horizontal bars that report which bar was clicked (pyqtgraph's BarGraphItem has no click signal),
and the rows each view mode draws, from a Profile."""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from backend_core.target.profile.milliseconds import island_ms, op_ms
from backend_core.target.profile.model import Profile

BAR_HEIGHT = 0.7


class ClickableBars(pg.BarGraphItem):
    """Bar i spans y in [i - h/2, i + h/2], x in [0, count]; a left click on it emits barClicked(i);
    hovering it shows its whole label as a tooltip."""

    barClicked = Signal(int)

    def __init__(self) -> None:
        super().__init__(x0=[], y=[], width=[], height=BAR_HEIGHT, brush="#607d8b", pen="#37474f")
        self._counts: list[float] = []
        self.tips: list[str] = []

    def set_rows(self, counts: list[float], colors: list[Any], tips: list[str] | None = None) -> None:
        self._counts = list(counts)
        self.tips = list(tips or [])
        n = len(counts)
        self.setOpts(x0=[0] * n, y=list(range(n)), width=list(counts), height=BAR_HEIGHT,
                     brushes=[pg.mkBrush(c) for c in colors], pen=pg.mkPen("#37474f"))
        # one shared pen: pyqtgraph 0.14 fails on an empty `pens` list (no bars)

    def bar_at(self, x: float, y: float) -> int | None:
        i = int(round(y))
        if 0 <= i < len(self._counts) and abs(y - i) <= BAR_HEIGHT / 2 and 0 <= x <= max(self._counts[i], 0):
            return i
        return None

    def hoverEvent(self, ev: Any) -> None:  # noqa: N802 - pyqtgraph API
        i = None if ev.isExit() else self.bar_at(ev.pos().x(), ev.pos().y())
        self.setToolTip(self.tips[i] if i is not None and i < len(self.tips) else "")

    def mouseClickEvent(self, ev: Any) -> None:  # noqa: N802 - Qt API
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        pos = ev.pos()
        i = self.bar_at(pos.x(), pos.y())
        if i is not None:
            ev.accept()
            self.barClicked.emit(i)


def _short(op: str) -> str:
    return op.replace("cortex_m.", "").replace("aten.", "").replace(".default", "")


def bar_rows(p: Profile, mode: str, top: int) -> list[dict[str, Any]]:
    """Rows (label, count, node to select, kind for the colour, estimated ms or None), the biggest at the top
    of the plot."""
    rows: list[dict[str, Any]]
    per_op = op_ms(p)                                   # the cycle estimate's ms ([] without one)
    ms_of = {id(o): m for o, m in zip(p.ops, per_op)}
    if mode == "islands":
        rows = [{"label": f"{i.name} ({i.share:.1%})", "count": i.count, "node": i.fallbacks[0] if i.fallbacks else None,
                 "kind": "island", "ms": island_ms(p, i, per_op)} for i in p.islands]
        neighbours = {n for i in p.islands for n in i.neighbours}
        rows += [{"label": f"{o.node} ({o.share:.1%})", "count": o.count, "node": o.node,
                  "kind": o.kind, "ms": ms_of.get(id(o))} for o in p.ops if o.node in neighbours]
    elif mode == "kinds":
        rows = [{"label": f"{g.name} ({g.share:.1%})", "count": g.count, "node": g.nodes[0] if g.nodes else None,
                 "kind": _kind_of(p, g.nodes), "ms": _group_ms(p, g.nodes, per_op)} for g in p.by_kind]
    elif mode == "modules":
        rows = [{"label": f"{g.name} ({g.share:.1%})", "count": g.count, "node": g.nodes[0] if g.nodes else None,
                 "kind": _kind_of(p, g.nodes), "ms": _group_ms(p, g.nodes, per_op)} for g in p.by_module[:top]]
    else:
        rows = [{"label": f"{o.node or _short(o.op)} ({o.share:.1%})", "count": o.count, "node": o.node,
                 "kind": o.kind, "ms": ms_of.get(id(o))} for o in p.top(top)]
    rows.sort(key=lambda r: r["count"])
    return rows


def _group_ms(p: Profile, nodes: list[str], per_op: list[float]) -> float | None:
    if not per_op:
        return None
    mine = set(nodes)
    return sum(m for o, m in zip(p.ops, per_op) if o.node in mine)


def _kind_of(p: Profile, nodes: list[str]) -> str:
    kinds = {o.kind for o in p.ops if o.node in set(nodes)}
    return kinds.pop() if len(kinds) == 1 else "group"
