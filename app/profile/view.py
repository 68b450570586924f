"""The profile view of a target run: horizontal bars of the costliest ops, the fallback islands, the
kernel kinds or the nn.Modules, in the run's unit (on QEMU: instructions executed under -icount, not
cycles), and a checkbox that colours the graph by cost.

Public API (the shell wires it; this package imports no other feature package):
- `ProfileView(parent)`, `set_profile(profile_dict | None)` with the `profile` of `cmlens run --json-file`;
- signal `nodeClicked(str)`: a final-graph node id (a bar: its node; an island or a module: its first
  fallback / node), like the Numerics and gap plots;
- signal `heatChanged(dict)`: {final node id: QColor} when "colour the graph by cost" is toggled ({}: off);
  `heat_args()` gives the (colors, value_range, label, stops) GraphPanel.set_heat takes, and
  `legend_texts()` the colour bar's wording (`graph.heat_legend.set_texts(*view.legend_texts())`);
- `node_html(node_id)`: a node's instructions, share, MACs, instructions per MAC and bytes, for the inspector."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from backend_core.profile.model import Profile
from backend_core.snapshot.model import KIND_CMSIS, KIND_FALLBACK

from app.profile import heat
from app.profile.bars import ClickableBars, bar_rows
from app.widgets import theme

MODES = (("ops", "top ops"), ("islands", "fallback islands"), ("kinds", "kernel kinds"), ("modules", "nn.Modules"))
TOP_N = 15


class ProfileView(QWidget):
    nodeClicked = Signal(str)
    heatChanged = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import pyqtgraph as pg

        self.profile: Profile | None = None
        self.rows: list[dict[str, Any]] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("no profile yet: run with profiling on (cmlens run --profile)")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        bar = QHBoxLayout()
        self.mode = QComboBox()
        for key, label in MODES:
            self.mode.addItem(label, key)
        self.mode.currentIndexChanged.connect(self._redraw)
        self.color_graph = QCheckBox("colour the graph by cost")
        self.color_graph.setToolTip("Heat overlay on the final graph: each node's share of the inference "
                                    "(log scale); the colour bar replaces the kind legend")
        self.color_graph.toggled.connect(self._emit_heat)
        bar.addWidget(QLabel("show"))
        bar.addWidget(self.mode)
        bar.addStretch(1)
        bar.addWidget(self.color_graph)
        self.plot = pg.PlotWidget(background="w")
        self.plot.showGrid(x=True, y=False, alpha=0.3)
        self.plot.setMinimumHeight(200)
        self.plot.getPlotItem().setMenuEnabled(False)
        self.plot.getPlotItem().getViewBox().setMouseEnabled(x=True, y=False)
        self.bars = ClickableBars()
        self.bars.barClicked.connect(self._bar_clicked)
        self.plot.addItem(self.bars)
        self.plot.getPlotItem().hideAxis("left")
        self._labels: list[Any] = []
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setStyleSheet(theme.MUTED_STYLE)
        lay.addWidget(self.title)
        lay.addLayout(bar)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.summary)

    # -- public API ------------------------------------------------------------------------------
    def set_profile(self, data: dict[str, Any] | None) -> None:
        """Show the `profile` of a run's JSON (None: clear)."""
        self.profile = Profile.from_dict(data) if data else None
        p = self.profile
        if p is None:
            self.title.setText("no profile for this run (run with profiling on: cmlens run --profile)")
        else:
            total = "-" if p.total is None else f"{p.total:,}"
            self.title.setText(f"<b>{p.model}</b> on {p.target}: <b>{total} {p.unit.name}</b> per inference "
                               f"&mdash; {p.unit.label}")
            self.mode.setCurrentIndex(1 if p.islands else 0)
        self._redraw()
        self._emit_heat(self.color_graph.isChecked())

    def heat_args(self) -> tuple[dict[str, Any], tuple[float, float], str, list[Any]] | None:
        return None if self.profile is None else heat.heat_args(self.profile)

    def legend_texts(self) -> tuple[str, str, str, str] | None:
        """(title, low, high, none) for the graph's colour bar: `graph.heat_legend.set_texts(*...)`."""
        return None if self.profile is None else heat.legend_texts(self.profile)

    def node_html(self, node_id: str) -> str:
        """Inspector lines for a final-graph node: "" when the profile has no row for it."""
        p = self.profile
        if p is None:
            return ""
        rows = [o for o in p.ops if o.node == node_id]
        if not rows:
            if node_id in p.no_instruction:
                return "<b>cost</b>: no instruction (a memory-planned view)"
            return ""
        count = sum(o.count for o in rows)
        share = sum(o.share for o in rows)
        o = rows[0]
        parts = [f"<b>cost</b>: {count:,} {p.unit.name} ({share:.1%} of the inference's kernels)",
                 f"<i>{p.unit.label}</i>"]
        if o.macs:
            parts.append(f"MACs {o.macs:,}, {count / o.macs:.2f} {p.unit.name} per MAC")
        if o.bytes_moved is not None:
            parts.append(f"bytes moved (read + written) {o.bytes_moved:,}")
        island = next((i for i in p.islands if node_id in i.nodes), None)
        if island is not None:
            ratio = "" if island.ratio is None else f", {island.ratio:.2g}x the CMSIS-NN kernels around it"
            parts.append(f"in the {island.name}: {island.count:,} {p.unit.name}, {island.share:.1%}{ratio}")
        return "<br>".join(parts)

    # -- internals -------------------------------------------------------------------------------
    def _redraw(self, *_: Any) -> None:
        import pyqtgraph as pg

        p = self.profile
        mode = self.mode.currentData()
        self.rows = bar_rows(p, mode, TOP_N) if p is not None else []
        colors = [_color(r["kind"]) for r in self.rows]
        self.bars.set_rows([r["count"] for r in self.rows], colors)
        for item in self._labels:
            self.plot.removeItem(item)
        self._labels = []
        top = max((r["count"] for r in self.rows), default=0)
        for i, r in enumerate(self.rows):          # labels on the bars: tick labels would be cut off
            inside = r["count"] > 0.55 * top       # long bars carry their label inside, right-aligned
            t = pg.TextItem(f" {r['label']}  {r['count']:,} ", color="#ffffff" if inside else "#263238",
                            anchor=(1, 0.5) if inside else (0, 0.5))
            t.setPos(r["count"], i)
            self.plot.addItem(t)
            self._labels.append(t)
        unit = p.unit.name if p is not None else ""
        self.plot.setLabel("bottom", f"{unit} ({p.unit.label})" if p is not None else "")
        if self.rows:
            self.plot.setYRange(-0.6, len(self.rows) - 0.4, padding=0)
            self.plot.setXRange(0, max(r["count"] for r in self.rows) * 1.25 or 1, padding=0)
        self.summary.setText(_summary(p) if p is not None else "")

    def _bar_clicked(self, index: int) -> None:
        if 0 <= index < len(self.rows) and self.rows[index]["node"]:
            self.nodeClicked.emit(self.rows[index]["node"])

    def _emit_heat(self, on: bool) -> None:
        if not on or self.profile is None:
            self.heatChanged.emit({})
            return
        self.heatChanged.emit(heat.cost_colors(self.profile))


def _color(kind: str) -> QColor:
    if kind in (KIND_CMSIS, KIND_FALLBACK) or kind in theme.KIND_STYLE:
        return theme.kind_colors(kind)[1]
    return QColor("#c62828") if kind == "island" else QColor("#607d8b")


def _summary(p: Profile) -> str:
    bits = []
    if p.total:
        bits.append(f"Method::execute {p.total:,}: kernels {p.ops_total / p.total:.1%}, dispatch + ETDump event "
                    f"recording {(p.overhead or 0) / p.total:.1%} (~{p.recording_per_event or 0:,} per event; "
                    f"shares are of the kernels)")
    bits.append("by kind: " + ", ".join(f"{g.name} {g.share:.1%}" for g in p.by_kind))
    for i in p.islands:
        r = "" if i.ratio is None else f" ({i.ratio:.2g}x the CMSIS-NN kernels around it)"
        bits.append(f"{i.name}: {i.share:.1%}{r}")
    if p.deterministic is not None:
        bits.append(f"{len(p.inference_totals)} inferences, " + ("identical counts" if p.deterministic else "counts differ"))
    bits += p.notes
    return "; ".join(bits)
