"""The profile view of a target run: horizontal bars of the costliest ops, the fallback islands, the
kernel kinds or the nn.Modules, in the run's unit (on QEMU: instructions executed under -icount, not
cycles), and a checkbox that colours the graph by cost.

Public API (the shell wires it; this package imports no other feature package):
- `ProfileView(parent)`, `set_profile(profile_dict | None)` with the `profile` of `cmlens run --json F`;
- signal `nodeClicked(str)`: a final-graph node id (a bar: its node; an island or a module: its first
  fallback / node), like the Numerics and gap plots;
- signal `heatChanged(dict)`: {final node id: QColor} when "colour the graph by cost" is toggled ({}: off);
  `heat_args()` gives the (colors, value_range, label, stops) GraphPanel.set_heat takes, and
  `legend_texts()` the colour bar's wording (`graph.heat_legend.set_texts(*view.legend_texts())`);
- `node_html(node_id)`: a node's instructions, share, MACs, instructions per MAC and bytes, for the inspector.
With a cycle estimate (a QEMU run with instruction classes), the estimate's headline sits under the title
(≈ ms @ the board's clock, ±error, low confidence in red) and every bar, island and node has its ≈ ms."""
from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QStackedWidget, QVBoxLayout, QWidget

from backend_core.target.profile.milliseconds import (error_text, estimate_headline, island_ms, op_ms,
                                                        sources_of_error, used_text)
from backend_core.target.profile.model import Profile
from backend_core.common.snapshot.model import KIND_CMSIS, KIND_FALLBACK

from app.profile import heat
from app.profile.bars import ClickableBars, bar_rows
from app.widgets import theme
from app.widgets.elided_label import ElidedLabel

TEXT_INSIDE, TEXT_OUTSIDE = "#ffffff", "#263238"      # on the bar's colour / on the plot's white

MODES = (("ops", "top ops"), ("islands", "fallback islands"), ("kinds", "kernel kinds"), ("modules", "nn.Modules"))
TOP_N = 15
ROW_GAP_PX = 2              # between two bars' label boxes; fewer rows are shown in less height
EMPTY = ("The per-op cost of a run (instructions per operator, fallback islands) appears here after a run "
         "with \"Per-op profile\" on (cmlens run --profile), or when you open an ETRecord with its ETDump.")


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
        self.title = ElidedLabel("no profile yet: run with profiling on (cmlens run --profile)")
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
        bar.addWidget(self.color_graph)
        self.plot = pg.PlotWidget(background="w")
        self.plot.showGrid(x=True, y=False, alpha=0.3)
        self.plot.setMinimumHeight(80)
        self.plot.getPlotItem().setMenuEnabled(False)
        self.plot.getPlotItem().getViewBox().setMouseEnabled(x=True, y=False)
        self.bars = ClickableBars()
        self.bars.barClicked.connect(self._bar_clicked)
        self.plot.addItem(self.bars)
        self.plot.getPlotItem().hideAxis("left")
        self.plot.getPlotItem().getViewBox().sigResized.connect(self._on_resized)
        self.plot.getPlotItem().getViewBox().sigXRangeChanged.connect(lambda *_: self._place_labels())
        self._labels: list[Any] = []
        self._fit_rows = 0
        self.estimate = ElidedLabel("")              # the cycle estimate: ms @ the board's clock, its error
        self.estimate.setTextFormat(Qt.TextFormat.RichText)
        self.estimate.setVisible(False)              # until a profile with an estimate is shown
        self.summary = ElidedLabel("")
        self.summary.setStyleSheet(theme.MUTED_STYLE)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addLayout(bar)
        self.with_data = QWidget()
        body = QVBoxLayout(self.with_data)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(1)
        body.addLayout(head)
        body.addWidget(self.estimate)
        body.addWidget(self.plot, 1)
        body.addWidget(self.summary)
        self.placeholder = QLabel(EMPTY)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet(theme.PLACEHOLDER_STYLE)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.placeholder)
        self.stack.addWidget(self.with_data)
        lay.addWidget(self.stack)

    # -- public API ------------------------------------------------------------------------------
    def set_profile(self, data: dict[str, Any] | None) -> None:
        """Show the `profile` of a run's JSON (None: clear)."""
        self.profile = Profile.from_dict(data) if data else None
        p = self.profile
        self.stack.setCurrentWidget(self.placeholder if p is None else self.with_data)
        if p is None:
            self.title.setText("no profile for this run (run with profiling on: cmlens run --profile)")
        else:
            total = "-" if p.total is None else f"{p.total:,}"
            self.title.setText(f"<b>{p.model}</b> on {p.target}: <b>{total} {p.unit.name}</b> per inference "
                               f"&mdash; {p.unit.label}")
            self.mode.setCurrentIndex(1 if p.islands else 0)
        self._show_estimate()
        self._redraw()
        self._emit_heat(self.color_graph.isChecked())

    def _show_estimate(self) -> None:
        """The estimate's headline (≈ cycles ≈ ms @ clock on board, ±error; low confidence in red), the values
        used and the sources of error in its tooltip; hidden without an estimate."""
        e = self.profile.estimate if self.profile is not None else None
        self.estimate.setVisible(bool(e))
        if not e:
            self.estimate.setText("")
            self.estimate.setToolTip("")
            return
        color = "#b71c1c" if e.get("low_confidence") else "#1b5e20"
        self.estimate.setText(f"<span style='color:{color}'><b>cycle estimate (kernels): "
                              f"{html.escape(estimate_headline(e, basis=False))}</b></span>")
        self.estimate.setToolTip("<br>".join(html.escape(x) for x in [
            "error: " + error_text(e), "used: " + used_text(e), *("not in the estimate: " + x for x in sources_of_error(e)),
            *("note: " + n for n in e.get("notes") or [])]))

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
        per_op = op_ms(p)
        if per_op and p.estimate is not None:
            mine = sum(m for r, m in zip(p.ops, per_op) if r.node == node_id)
            parts.append(f"<b>≈ {mine:.3f} ms</b> estimated @ {p.estimate['clock_mhz']:g} MHz on "
                         f"{p.estimate.get('board') or p.estimate['core']} ({html.escape(error_text(p.estimate))})")
        island = next((i for i in p.islands if node_id in i.nodes), None)
        if island is not None:
            ratio = "" if island.ratio is None else f", {island.ratio:.2g}x the CMSIS-NN kernels around it"
            est = f", ≈ {island_ms(p, island, per_op):.3f} ms" if per_op else ""
            parts.append(f"in the {island.name}: {island.count:,} {p.unit.name}{est}, {island.share:.1%}{ratio}")
        return "<br>".join(parts)

    # -- internals -------------------------------------------------------------------------------
    def _rows_that_fit(self) -> int:
        """As many rows as the view box holds with each label's box (text + its margins) clear of the next."""
        import pyqtgraph as pg

        if not hasattr(self, "_row_px"):
            probe = pg.TextItem("Xg")                  # held: the C++ text item goes with the wrapper
            self._row_px = probe.textItem.boundingRect().height() + ROW_GAP_PX
        h = self.plot.getPlotItem().getViewBox().height()
        return max(2, int(h / self._row_px - 0.2)) if h > 0 else TOP_N     # the y range spans n + 0.2 rows

    def _on_resized(self, *_: Any) -> None:
        if self._rows_that_fit() != self._fit_rows:
            self._redraw()
        else:
            self._place_labels()

    def _redraw(self, *_: Any) -> None:
        """The costliest rows that fit the plot's height (each label's box clear of the next); the rest are
        named in the summary's tooltip."""
        p = self.profile
        mode = self.mode.currentData()
        every = bar_rows(p, mode, TOP_N) if p is not None else []
        self._fit_rows = self._rows_that_fit()
        self.rows = every[-self._fit_rows:]
        colors = [_color(r["kind"]) for r in self.rows]
        tips = [f"{r['label']}: {r['count']:,}" + _ms_text(r) for r in self.rows]
        self.bars.set_rows([r["count"] for r in self.rows], colors, tips)
        for item in self._labels:
            self.plot.removeItem(item)
        self._labels = []
        import pyqtgraph as pg

        for i, _row in enumerate(self.rows):
            t = pg.TextItem("", color=TEXT_OUTSIDE)
            t.setToolTip(tips[i])
            self.plot.addItem(t, ignoreBounds=True)
            self._labels.append(t)
        unit = p.unit.name if p is not None else ""
        self.plot.setLabel("bottom", f"{unit} ({p.unit.label})" if p is not None else "")
        if self.rows:
            self.plot.setYRange(-0.6, len(self.rows) - 0.4, padding=0)
            self.plot.setXRange(0, max(r["count"] for r in self.rows) * 1.02 or 1, padding=0)
        hidden = len(every) - len(self.rows)
        text = _summary(p) if p is not None else ""
        if hidden > 0:
            text = f"{len(self.rows)} of {len(every)} rows shown (a taller panel shows more); " + text
        self.summary.setText(text)
        self._place_labels()

    def _place_labels(self) -> None:
        """Each bar's label inside the bar when it fits there, else right of it; elided to the room it
        has (never over the next bar or past the axes); the whole label is the bar's tooltip."""
        vb = self.plot.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        width_px = vb.width()
        if width_px <= 0 or x1 <= x0:
            return
        per_unit = width_px / (x1 - x0)
        for t, r in zip(self._labels, self.rows):
            full = f" {r['label']}  {r['count']:,}{_ms_text(r)} "
            fm = QFontMetricsF(t.textItem.font())
            pad = t.textItem.boundingRect().width() - fm.horizontalAdvance(t.textItem.toPlainText())
            bar_px = (r["count"] - x0) * per_unit
            inside, outside = bar_px - 6 - pad, width_px - bar_px - 6 - pad
            need = fm.horizontalAdvance(full)
            if need <= inside:
                where, room = "in", inside
            elif need <= outside:
                where, room = "out", outside
            else:
                where, room = ("in", inside) if inside >= outside else ("out", outside)
            text = full if need <= room else fm.elidedText(full, Qt.TextElideMode.ElideRight, max(room, 0))
            if room < 30 or not text.strip(" …"):
                t.setVisible(False)
                continue
            t.setVisible(True)
            t.setText(text, color=TEXT_INSIDE if where == "in" else TEXT_OUTSIDE)
            t.setAnchor((1, 0.5) if where == "in" else (0, 0.5))
            t.setPos(r["count"], self.rows.index(r))

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


def _ms_text(row: dict[str, Any]) -> str:
    """"  ≈ 0.052 ms" for a bar with an estimate, "" without."""
    return "" if row.get("ms") is None else f"  ≈ {row['ms']:.3f} ms"


def _summary(p: Profile) -> str:
    bits = []
    if p.total:
        bits.append(f"Method::execute {p.total:,}: kernels {p.ops_total / p.total:.1%}, dispatch + ETDump event "
                    f"recording {(p.overhead or 0) / p.total:.1%} (~{p.recording_per_event or 0:,} per event; "
                    f"shares are of the kernels)")
    bits.append("by kind: " + ", ".join(f"{g.name} {g.share:.1%}" for g in p.by_kind))
    per_op = op_ms(p)
    for i in p.islands:
        r = "" if i.ratio is None else f" ({i.ratio:.2g}x the CMSIS-NN kernels around it)"
        est = f", ≈ {island_ms(p, i, per_op):.3f} ms" if per_op else ""
        bits.append(f"{i.name}: {i.share:.1%}{est}{r}")
    if p.deterministic is not None:
        bits.append(f"{len(p.inference_totals)} inferences, " + ("identical counts" if p.deterministic else "counts differ"))
    bits += p.notes
    return "; ".join(bits)
