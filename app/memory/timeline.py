"""The timeline plot: planned bytes alive per op (x = op in execution order), the peak marked, float
islands shaded; a click on an op emits its final-graph node id. The peak and the arena line are labelled
inside the axes (app.widgets.plot_text.PlotAnnotations); every op says what it is on hover."""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal

from app.widgets.plot_text import ABOVE, BELOW, PlotAnnotations

ISLAND = (229, 57, 53, 50)         # translucent red: fp32 tensors of a fallback island
LIVE = "#1e88e5"
FLOAT = "#e53935"
PEAK = "#d81b60"


class TimelinePlot(QObject):
    nodeClicked = Signal(str)

    def __init__(self, widget: pg.PlotWidget) -> None:
        super().__init__(widget)
        self.widget = widget
        p = widget.getPlotItem()
        p.setLabel("left", "live planned bytes", units="B")
        p.setLabel("bottom", "op (execution order)")
        p.showGrid(x=False, y=True, alpha=0.3)
        p.setMenuEnabled(False)
        self.steps: list[dict[str, Any]] = []
        self.items: list[Any] = []
        self.scatter = pg.ScatterPlotItem(size=9, pen=pg.mkPen("#0d47a1"), brush=pg.mkBrush(LIVE), hoverable=True,
                                          tip=self._tip)
        self.scatter.sigClicked.connect(self._clicked)
        p.addItem(self.scatter)
        self.notes = PlotAnnotations(p)

    def draw(self, rep: dict[str, Any] | None) -> None:
        p = self.widget.getPlotItem()
        for it in self.items:
            p.removeItem(it)
        self.items = []
        self.notes.clear()
        self.steps = list(rep["timeline"]) if rep else []
        if not self.steps:
            self.scatter.setData([])
            return
        assert rep is not None                  # the steps are its timeline
        xs = [s["index"] for s in self.steps]
        live = [s["live_bytes"] for s in self.steps]
        for isl in rep.get("float_islands", []):
            lo, hi = min(isl["steps"]) - 0.5, max(isl["steps"]) + 0.5
            region = pg.LinearRegionItem((lo, hi), movable=False, brush=pg.mkBrush(*ISLAND), pen=pg.mkPen(None))
            region.setToolTip(f"float island: {', '.join(isl['nodes'])} — {isl['float_bytes']:,} B of fp32 "
                              f"tensors, {isl['extra_vs_int8']:,} B more than int8")
            self._add(region)
        edges = [x - 0.5 for x in xs] + [xs[-1] + 0.5]      # op i spans [i - 0.5, i + 0.5]
        curve = pg.PlotCurveItem(edges, live, stepMode="center", pen=pg.mkPen(LIVE, width=2),
                                 fillLevel=0, brush=pg.mkBrush(30, 136, 229, 60))
        self._add(curve)
        fl = [s["float_bytes"] for s in self.steps]
        if any(fl):
            self._add(pg.PlotCurveItem(edges, fl, stepMode="center", pen=pg.mkPen(FLOAT, width=1.5)))
        spots = [{"pos": (x, y), "data": s.get("node") or "", "brush": pg.mkBrush(FLOAT if s["in_float_island"] else LIVE)}
                 for x, y, s in zip(xs, live, self.steps)]
        self.scatter.setData(spots)
        self.scatter.setZValue(10)
        i = rep["peak_index"]
        peak = pg.ScatterPlotItem([xs[i]], [live[i]], symbol="star", size=18, pen=pg.mkPen("#880e4f"),
                                  brush=pg.mkBrush(PEAK))
        peak.setZValue(11)
        self._add(peak)
        arena = rep["arena_bytes"]
        line = pg.InfiniteLine(arena, angle=0, pen=pg.mkPen("#546e7a", style=pg.QtCore.Qt.PenStyle.DashLine))
        line.setToolTip(f"planned arena {arena:,} B")
        self._add(line)
        p = self.widget.getPlotItem()
        p.setXRange(-0.5, xs[-1] + 0.5, padding=0.02)
        p.setYRange(0, max(arena, max(live)) * 1.3, padding=0)
        # the peak first (it matters most), then the arena line's name at its right end
        self.notes.add(f"peak {live[i]:,} B", xs[i], live[i], PEAK, gap=11)     # clear of the star
        self.notes.add(f"planned arena {arena:,} B", xs[-1] + 0.5, arena, "#546e7a",
                       anchors=((1.0, 1.0), (1.0, 0.0), (0.5, 1.0)) + ABOVE + BELOW)

    def _add(self, item: Any) -> None:
        self.widget.getPlotItem().addItem(item)
        self.items.append(item)

    def _tip(self, x: float, y: float, data: Any) -> str:
        step = next((s for s in self.steps if s["index"] == int(round(x))), None)
        extra = f", {step['float_bytes']:,} B fp32 (float island)" if step and step.get("in_float_island") else ""
        return f"op #{int(round(x))} {data or ''}\nlive planned bytes {int(y):,} B{extra}"

    def _clicked(self, _item: Any, points: Any, *_: Any) -> None:
        for pt in points[:1]:
            node = pt.data()
            if node:
                self.nodeClicked.emit(str(node))
