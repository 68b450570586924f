"""The Numerics tab: per-layer SQNR, reference-vs-lowered scatter, histograms, heat colours.

Pure view: it shows a NumericsResult (backend_core.analyses.numerics.results, no torch) and emits
`nodeClicked(node_id)` with the FINAL snapshot's node id when a point is clicked. It never runs
anything; the panel (app.numerics.panel) submits a lowering + numerics Job to the job worker
through app.runtime.qt_job.QtJob (a Job in the job worker: the GUI does not import torch).

Re-exported here for existing importers: `render_sqnr_png(result, path)` (app.numerics.plot,
shared with the CLI's `--plot`) and `error_values` / `error_colors` / `ColorBar` for the graph's
heat overlay (app.numerics.heat).
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LABELS, PAIR_LOCAL,
                                           PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ, PAIRS,
                                           SQNR_CAP_DB, NumericsResult)

from app.numerics.heat import HEAT_MAP, ColorBar, error_colors, error_values, heat_range
from app.numerics.plot import CURVES, PLOT_CAP_DB, fill_sqnr_plot, plot_y, render_sqnr_png, white_plot
from app.numerics.text import layer_text, summary_text
from app.widgets.elided_label import ElidedLabel
from app.widgets.theme import PLACEHOLDER_STYLE

EMPTY = ("Per-layer numerics (float vs fake-quant vs the lowered program, SQNR per layer) appear here: "
         "press Run numerics (Ctrl+N).")


class NumericsView(QWidget):
    """Per-layer SQNR plot, reference-vs-lowered scatter and histograms of the selected layer.

    Signals:
        nodeClicked(str): final-snapshot node id of a clicked SQNR point.
        heatChanged(dict): {node_id: QColor} for the graph's heat overlay, whenever the result
            or the heat metric changes (empty dict when there is no result).
    Slots:
        set_result(result | dict | None), select_node(node_id)
    """

    nodeClicked = Signal(str)
    heatChanged = Signal(object)     # not Signal(dict): PySide6 6.12 mis-counts references

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import pyqtgraph as pg

        self._result: NumericsResult | None = None
        self._selected: str | None = None
        self._items: list[Any] = []

        self.summary = ElidedLabel("")         # one line; all of it in the tooltip
        self.heat_metric = QComboBox()
        for pair in (PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ, PAIR_LOCAL, PAIR_FQ_VS_FLOAT):
            self.heat_metric.addItem(PAIR_LABELS[pair], pair)
        self.heat_metric.setToolTip("Metric used by the heat overlay on the graph")
        self.heat_metric.currentIndexChanged.connect(self._emit_heat)
        self.scatter_ref = QComboBox()
        self.scatter_ref.addItem("fake-quant reference", "fake_quant")
        self.scatter_ref.addItem("float reference", "float")
        self.scatter_ref.currentIndexChanged.connect(lambda _i: self._show_layer())

        self.sqnr_plot = white_plot()
        self.sqnr_plot.setMinimumHeight(100)
        self.scatter_plot = white_plot("reference vs lowered")
        self.scatter_plot.setLabel("bottom", "reference")
        self.scatter_plot.setLabel("left", "lowered")
        self.float_hist = white_plot("float reference values")
        self.int_hist = white_plot("lowered values on the int8 grid")
        self.colorbar = ColorBar()
        self.colorbar.setMinimumSize(70, 100)
        self.colorbar.setMaximumWidth(90)
        self.layer_label = ElidedLabel("")
        self._marker = pg.ScatterPlotItem(size=16, pen=pg.mkPen("k", width=2), brush=None,
                                          symbol="o")
        # pyqtgraph offers clicks to every item near the cursor, whatever its accepted buttons:
        # the ring around the selected point must pass them on to the curve's point below
        self._marker.mouseClickEvent = lambda ev: ev.ignore()

        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(QLabel("heat:"))
        top.addWidget(self.heat_metric)
        # one row, left to right: all layers | the selected layer (scatter, histograms) | heat bar;
        # it fits the wide, short bottom dock of the main window
        scatter_box = QWidget()
        sb = QVBoxLayout(scatter_box)
        sb.setContentsMargins(0, 0, 0, 0)
        sb.setSpacing(1)
        sb.addWidget(self.scatter_ref)
        sb.addWidget(self.scatter_plot, 1)
        hists = QSplitter(Qt.Orientation.Vertical)
        # a float output has no int8 grid: say so instead of empty axes under the last int layer's label
        self.int_note = QLabel("")
        self.int_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.int_note.setWordWrap(True)
        self.int_note.setStyleSheet(PLACEHOLDER_STYLE)
        self.int_box = QStackedWidget()
        self.int_box.addWidget(self.int_hist)
        self.int_box.addWidget(self.int_note)
        hists.addWidget(self.float_hist)
        hists.addWidget(self.int_box)
        row = QSplitter(Qt.Orientation.Horizontal)
        row.addWidget(self.sqnr_plot)
        row.addWidget(scatter_box)
        row.addWidget(hists)
        row.addWidget(self.colorbar)
        for i, k in enumerate((6, 3, 3, 0)):
            row.setStretchFactor(i, k)
        row.setSizes([600, 300, 300, 80])
        self.splitter = row
        self.placeholder = QLabel(EMPTY)          # no empty axes before a run
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet(PLACEHOLDER_STYLE)
        self.body = QStackedWidget()
        self.body.addWidget(self.placeholder)
        self.body.addWidget(row)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.layer_label)
        lay.addWidget(self.body, 1)

    # -- public API --------------------------------------------------------------------------
    def result(self) -> NumericsResult | None:
        return self._result

    @Slot(object)
    def set_result(self, result: NumericsResult | dict | None) -> None:
        if isinstance(result, dict):
            result = NumericsResult.from_dict(result)
        self._result = result
        self._selected = None
        plot = self.sqnr_plot.getPlotItem()
        if result is None:
            plot.clear()
            self.summary.setText("")
            self.body.setCurrentWidget(self.placeholder)
            self._clear_layer()
            self.heatChanged.emit({})
            return
        self.body.setCurrentWidget(self.splitter)
        self._items = fill_sqnr_plot(plot, result, PAIRS)
        for item in self._items:
            item.sigPointsClicked.connect(self._on_points_clicked)
        plot.addItem(self._marker)
        self.summary.setText(summary_text(result))
        self._emit_heat()
        worst = result.worst(1)
        if worst:
            self.select_node(worst[0].node_id)

    @Slot(str)
    def select_node(self, node_id: str) -> None:
        """Show the layer for a final-graph node (no-op for nodes without numerics)."""
        if self._result is None or self._result.layer(node_id) is None:
            return
        self._selected = node_id
        self._show_layer()

    def selected_node(self) -> str | None:
        return self._selected

    def heat_colors(self) -> dict[str, Any]:
        if self._result is None:
            return {}
        pair = self.heat_metric.currentData()
        lo, hi = heat_range(error_values(self._result, pair))
        return error_colors(self._result, pair, (lo, hi))

    # -- internals ---------------------------------------------------------------------------
    def _emit_heat(self) -> None:
        if self._result is None:
            return
        pair = self.heat_metric.currentData()
        lo, hi = heat_range(error_values(self._result, pair))
        self.colorbar.set_range(lo, hi, PAIR_LABELS[pair])
        self.heatChanged.emit(self.heat_colors())

    def _on_points_clicked(self, _item: Any, points: Any, *_rest: Any) -> None:
        if points is None or len(points) == 0:
            return
        node_id = points[0].data()
        if isinstance(node_id, str):
            self.select_node(node_id)
            self.nodeClicked.emit(node_id)

    def _clear_layer(self) -> None:
        for w in (self.scatter_plot, self.float_hist, self.int_hist):
            w.getPlotItem().clear()
        self.layer_label.setText("")

    def _show_layer(self) -> None:
        import pyqtgraph as pg

        self._clear_layer()
        if self._result is None or self._selected is None:
            return
        layer = self._result.layer(self._selected)
        if layer is None:
            return
        ys = [plot_y(m.sqnr_db) for m in (layer.metric(p) for p in PAIRS) if m is not None]
        self._marker.setData([layer.index] * len(ys), ys)
        self.layer_label.setText(layer_text(layer))
        ref_key = self.scatter_ref.currentData()
        ref, low = layer.sample.get(ref_key), layer.sample.get("lowered")
        if ref and low:
            n = min(len(ref), len(low))
            sp = self.scatter_plot.getPlotItem()
            sp.addItem(pg.ScatterPlotItem(ref[:n], low[:n], size=4, pen=None,
                                          brush=pg.mkBrush(31, 119, 180, 140)))
            lo, hi = min(ref[:n] + low[:n]), max(ref[:n] + low[:n])
            sp.addItem(pg.PlotDataItem([lo, hi], [lo, hi], pen=pg.mkPen((120, 120, 120), style=Qt.PenStyle.DashLine)))
            sp.setLabel("bottom", f"{ref_key.replace('_', '-')} reference")
        if layer.float_hist is not None and layer.float_hist.counts:
            self.float_hist.getPlotItem().addItem(pg.PlotDataItem(
                list(layer.float_hist.edges), list(layer.float_hist.counts), stepMode="center",
                fillLevel=0, brush=(31, 119, 180, 120)))
        if layer.int_hist is not None and layer.qmin is not None:
            levels = list(range(layer.qmin, layer.qmin + len(layer.int_hist) + 1))
            ih = self.int_hist.getPlotItem()
            ih.addItem(pg.PlotDataItem(levels, layer.int_hist, stepMode="center", fillLevel=0,
                                       brush=(255, 127, 14, 140)))
            if layer.zero_point is not None:
                ih.addItem(pg.InfiniteLine(layer.zero_point, angle=90,
                                           pen=pg.mkPen((120, 120, 120), style=Qt.PenStyle.DashLine)))
            ih.setLabel("bottom", f"int level (zero point {layer.zero_point}, scale {layer.scale:.3g})")
            self.int_box.setCurrentWidget(self.int_hist)
        else:
            dtype = layer.dtype or ""
            self.int_note.setText(f"{layer.node_id} outputs {dtype}: it runs in float, off the int8 grid"
                                  if dtype.startswith(("float", "bfloat")) else
                                  f"no integer values of {layer.node_id} were recorded")
            self.int_box.setCurrentWidget(self.int_note)


__all__ = ["NumericsView", "ColorBar", "error_colors", "error_values", "heat_range",
           "render_sqnr_png", "SQNR_CAP_DB", "HEAT_MAP", "CURVES",
           "PLOT_CAP_DB"]
