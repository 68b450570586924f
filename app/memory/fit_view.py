"""What the Memory tab shows of a schedule (app.memory.fit.FitModel's result): the live bytes per op of the
scheduled program drawn over the unscheduled one on the timeline's axis, the two floors and the board's
RAM as lines, and the chosen schedule's numbers in one line. It draws what it is given and keeps nothing
of the search."""
from __future__ import annotations

import html
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt

from backend_core.target.memory.fit import kib

from app.widgets.plot_text import legend_above

AFTER = "#2e7d32"
LAYER_FLOOR = "#8e24aa"
PATCH_FLOOR = "#ef6c00"
BOARD = "#c62828"
BEFORE = "#1e88e5"
ROOM = 4.0           # a line more than this many times the curves' top is named in the legend, not drawn


def grid_text(c: dict[str, Any]) -> str:
    return f"{c['grid'][0]}×{c['grid'][1]}"


def numbers_html(s: dict[str, Any]) -> str:
    """The chosen schedule in one line: total RAM before → after, how many times smaller, extra MACs, the
    patch grid and where it ends, the input, the host check."""
    c, plain = s["chosen"], s["plain"]
    before, after = plain["total_ram_bytes"], c["total_ram_bytes"]
    where = (f"{html.escape(c['split'])} in <b>{grid_text(c)} patches</b>" if c["split"]
             else "no patches (the int8 input alone is enough)")
    check = {True: "bit-exact on the host", False: "DIFFERS on the host", None: "not checked"}[c.get("bit_exact")]
    board = f"<b>fits {html.escape(str(s['board']))}</b>: " if s.get("board") else ""
    return (f"{board}total RAM {kib(before)} → <b>{kib(after)}</b> (<b>{before / max(after, 1):.2f}× smaller</b>)"
            f" · <b>{100 * c['extra_macs']:+.1f} % MACs</b> · {where} · {c['input_dtype']} input, planner "
            f"{html.escape(c['planner'])} · {check}")


def details_rows(s: dict[str, Any]) -> list[str]:
    """The schedule's lines for the details pane: floors, where the patchable region ends, the front."""
    rows = [f"<b>layer floor</b>: {kib(s['layer_floor_bytes'])} (live tensors at "
            f"{html.escape(s['layer_floor_op'])}: no layer-by-layer order goes below it)"]
    if s.get("patch_floor_split"):
        rows.append(f"<b>patch floor</b>: {kib(s['patch_floor_bytes'])} (split at "
                    f"{html.escape(s['patch_floor_split'])}: the input and the split tensor whole)")
    if s.get("why_region_ends"):
        rows.append(f"<b>patchable region ends</b>: {html.escape(s['why_region_ends'])}")
    rows.append(f"<b>Pareto front</b> ({s['tried']} candidates tried; the chosen one checked bit for bit "
                "on the host, none offered unchecked):")
    for c in s["front"]:
        where = f"{html.escape(c['split'])} {grid_text(c)}" if c["split"] else "no patches"
        rows.append(f"&nbsp;&nbsp;{kib(c['total_ram_bytes'])} · {100 * c['extra_macs']:+.1f} % MACs · {where} · "
                    f"{c['input_dtype']}, {html.escape(c['planner'])}")
    return rows


class ScheduleOverlay:
    """Draws the scheduled program's timeline over the unscheduled one (app.memory.timeline.TimelinePlot)
    in the same PlotItem: both x = op in execution order of its own program (the scheduled one runs the
    prefix once per patch, so it is longer), y = live planned bytes; the floors and the board's RAM as
    horizontal lines; a legend above the axes names every curve and line with its number."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        self.items: list[Any] = []
        self.legend: Any = None
        self.after: pg.PlotCurveItem | None = None

    def clear(self) -> None:
        for it in self.items:
            self.plot.removeItem(it)
        self.items = []
        self.after = None
        if self.legend is not None:
            self.legend.clear()

    def draw(self, s: dict[str, Any] | None) -> None:
        """Draw `s` (FitModel.result) over the timeline already drawn; None: remove the overlay."""
        self.clear()
        before = (s or {}).get("before") or {}
        after = ((s or {}).get("memory") or {}).get("timeline") or []
        if s is None or not after or not before.get("timeline"):
            return
        if self.legend is None:
            self.legend = legend_above(self.plot, columns=3)
        live_b = [t["live_bytes"] for t in before["timeline"]]
        live_a = [t["live_bytes"] for t in after]
        self._legend_line(BEFORE, f"before {kib(max(live_b))}")
        xs = [t["index"] for t in after]
        edges = [x - 0.5 for x in xs] + [xs[-1] + 0.5]
        self.after = pg.PlotCurveItem(edges, live_a, stepMode="center", pen=pg.mkPen(AFTER, width=2.2),
                                      fillLevel=0, brush=pg.mkBrush(46, 125, 50, 50))
        self.after.setToolTip(f"after: the {grid_text(s['chosen'])} schedule's live planned bytes per op "
                              f"({len(after)} ops), peak {max(live_a):,} B")
        self._add(self.after)
        self._legend_line(AFTER, f"after {self._after_name(s)} {kib(max(live_a))}")
        top = max(max(live_b), max(live_a), int(before.get("arena_bytes") or 0))   # the arena line stays in view
        board = (s.get("memory") or {}).get("board") or before.get("board") or {}
        lines = [(s["layer_floor_bytes"], LAYER_FLOOR, Qt.PenStyle.DashLine, "layer floor"),
                 (s["patch_floor_bytes"], PATCH_FLOOR, Qt.PenStyle.DotLine, "patch floor")]
        if board.get("ram_bytes"):
            lines.append((board["ram_bytes"], BOARD, Qt.PenStyle.SolidLine, f"{board['name']} RAM"))
        shown_top = top
        for y, color, style, name in lines:
            drawn = y <= ROOM * top
            if drawn:
                line = pg.InfiniteLine(y, angle=0, pen=pg.mkPen(color, width=1.6, style=style))
                line.setToolTip(f"{name}: {y:,} B")
                self._add(line)
                shown_top = max(shown_top, y)
            self._legend_line(color, f"{name} {kib(y)}" + ("" if drawn else " (off the axis)"), style)
        self.plot.setXRange(-0.5, max(xs[-1], len(live_b) - 1) + 0.5, padding=0.02)
        self.plot.setYRange(0, shown_top * 1.12, padding=0)

    @staticmethod
    def _after_name(s: dict[str, Any]) -> str:
        c = s["chosen"]
        return grid_text(c) if c["split"] else f"({c['input_dtype']} input)"

    def _legend_line(self, color: str, text: str, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> None:
        sample = pg.PlotDataItem([0, 1], [0, 0], pen=pg.mkPen(color, width=2.2, style=style))
        self.legend.addItem(sample, text)

    def _add(self, item: Any) -> None:
        self.plot.addItem(item)
        self.items.append(item)
