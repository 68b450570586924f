"""The Numerics tab: per-layer SQNR, reference-vs-lowered scatter, histograms, heat colours.

Pure view: it shows a NumericsResult (backend_core.numerics.results, no torch) and emits
`nodeClicked(node_id)` with the FINAL snapshot's node id when a point is clicked. It never runs
anything; see `numerics_worker_arguments` for running `python -m backend_core.numerics.worker`
through app.worker_client.WorkerClient (a separate process: the GUI does not import torch).

Also here, because the CLI's `--plot` and the widget share the plot code:
`render_sqnr_png(result, path)` (offscreen pyqtgraph ImageExporter) and
`error_values` / `error_colors` / `ColorBar` for a heat overlay on the graph view.
"""
from __future__ import annotations

import os
from typing import Any

from backend_core.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LABELS, PAIR_LOCAL,
                                           PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ, PAIRS,
                                           SQNR_CAP_DB, LayerResult, NumericsResult)

# Curves on the SQNR plot, bottom to top of the legend.
CURVES = ((PAIR_LOWERED_VS_FLOAT, (31, 119, 180), "o"), (PAIR_LOWERED_VS_FQ, (255, 127, 14), "t"),
          (PAIR_FQ_VS_FLOAT, (148, 103, 189), "d"), (PAIR_LOCAL, (214, 39, 40), "s"))
PLOT_CAP_DB = 100.0      # identical tensors (capped at SQNR_CAP_DB) are drawn at this height
HEAT_MAP = "inferno"


def numerics_worker_arguments(source: str, target: str, flow: str, inputs: str | int | None = None,
                              calib: str | None = None, json_out: str | None = None) -> list[str]:
    """Arguments for WorkerClient.start(): runs the numerics worker, which streams
    status / progress / result / error / done JSON lines (see backend_core/numerics/worker.py)."""
    args = ["-m", "backend_core.numerics.worker", source, "--target", target, "--flow", flow]
    if inputs not in (None, ""):
        args += ["--inputs", str(inputs)]
    if calib:
        args += ["--calib", str(calib)]
    if json_out:
        args += ["--json", json_out]
    return args


def _plot_y(sqnr: float) -> float:
    return min(sqnr, PLOT_CAP_DB)


# -- heat overlay ---------------------------------------------------------------------------
def error_values(result: NumericsResult, pair: str = PAIR_LOWERED_VS_FLOAT) -> dict[str, float]:
    """Per final-graph node: SQNR (dB) of `pair`; lower means more error."""
    out = {}
    for l in result.layers:
        m = l.metric(pair)
        if m is not None:
            out[l.node_id] = min(m.sqnr_db, PLOT_CAP_DB)
    return out


def heat_range(values: dict[str, float]) -> tuple[float, float]:
    """(worst, best) SQNR shown by the colour bar; at least 10 dB wide."""
    if not values:
        return 0.0, 60.0
    lo, hi = min(values.values()), max(values.values())
    if hi - lo < 10.0:
        hi = lo + 10.0
    return lo, hi


def error_colors(result: NumericsResult, pair: str = PAIR_LOWERED_VS_FLOAT,
                 value_range: tuple[float, float] | None = None) -> dict[str, Any]:
    """node id -> QColor: bright (hot) for the lowest SQNR, dark for the highest."""
    import pyqtgraph as pg

    values = error_values(result, pair)
    lo, hi = value_range or heat_range(values)
    cmap = pg.colormap.get(HEAT_MAP)
    return {nid: cmap.map(1.0 - _unit(v, lo, hi), mode="qcolor") for nid, v in values.items()}


def _unit(v: float, lo: float, hi: float) -> float:
    return 0.0 if hi <= lo else max(0.0, min(1.0, (v - lo) / (hi - lo)))


# -- offscreen PNG --------------------------------------------------------------------------
def _ensure_app() -> Any:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([])


def _fill_sqnr_plot(plot: Any, result: NumericsResult, pairs: tuple[str, ...]) -> list[Any]:
    import pyqtgraph as pg

    plot.clear()
    plot.showGrid(x=True, y=True, alpha=0.3)
    plot.setLabel("left", f"SQNR (dB; bit-exact drawn at {PLOT_CAP_DB:.0f})")
    plot.setLabel("bottom", "layer (final graph, topological order)")
    if plot.legend is None:   # top right, above the bit-exact line (the y range leaves room)
        plot.addLegend(offset=(-10, 2), colCount=2, brush=(255, 255, 255, 215), labelTextColor="#37474f",
                       labelTextSize="8pt", verSpacing=-6)
    items = []
    xs = [l.index for l in result.layers]
    for pair, color, symbol in CURVES:
        if pair not in pairs:
            continue
        pts = [(l.index, _plot_y(l.metric(pair).sqnr_db), l.node_id) for l in result.layers
               if l.metric(pair) is not None]
        if not pts:
            continue
        item = pg.PlotDataItem([p[0] for p in pts], [p[1] for p in pts], pen=pg.mkPen(color, width=2),
                               symbol=symbol, symbolSize=8, symbolBrush=pg.mkBrush(*color),
                               symbolPen=pg.mkPen(color), name=PAIR_LABELS[pair],
                               data=[p[2] for p in pts])
        plot.addItem(item)
        items.append(item)
    if xs:
        plot.setXRange(min(xs) - 0.5, max(xs) + 0.5, padding=0.02)
        if len(xs) <= 24:
            plot.getAxis("bottom").setTickSpacing(5, 1)     # whole layers only
        else:
            plot.getAxis("bottom").setTickSpacing()
        ys = [_plot_y(m.sqnr_db) for l in result.layers for m in (l.metric(p) for p in pairs) if m is not None]
        if ys:
            plot.setYRange(min(min(ys) - 5, 0.0), PLOT_CAP_DB + 45, padding=0)
    return items


def render_sqnr_png(result: NumericsResult, path: str, width: int = 1200, height: int = 500,
                    pairs: tuple[str, ...] = PAIRS) -> str:
    """Per-layer SQNR plot as a PNG, rendered offscreen (no display needed)."""
    app = _ensure_app()
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    win = pg.GraphicsLayoutWidget()
    win.resize(width, height)
    plot = win.addPlot(title=f"{result.model}: per-layer SQNR ({result.target}, {result.flow}, "
                             f"{result.n_inputs} sample(s))")
    _fill_sqnr_plot(plot, result, pairs)
    app.processEvents()
    exp = ImageExporter(plot)
    exp.parameters()["width"] = int(width)
    exp.parameters()["height"] = int(height)
    exp.export(str(path))
    win.close()
    win.deleteLater()
    app.processEvents()
    return str(path)


# -- the widget -----------------------------------------------------------------------------
from PySide6.QtCore import Qt, Signal, Slot  # noqa: E402 - the pure helpers above need no Qt
from PySide6.QtGui import QLinearGradient, QPainter  # noqa: E402
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QSplitter, QVBoxLayout,  # noqa: E402
                               QWidget)

from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)


def _white_plot(title: str | None = None) -> Any:
    """A PlotWidget on white with dark axes (the app's light theme; pyqtgraph's default is black)."""
    import pyqtgraph as pg

    w = pg.PlotWidget(background="w")
    item = w.getPlotItem()
    if title:
        item.setTitle(title, color="#37474f", size="10pt")
    for name in ("left", "bottom"):
        ax = item.getAxis(name)
        ax.setPen(pg.mkPen("#78909c"))
        ax.setTextPen(pg.mkPen("#37474f"))
    return w


class ColorBar(QWidget):
    """Vertical gradient for the heat overlay: worst SQNR at the top (bright)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lo, self._hi = 0.0, 60.0
        self._label = PAIR_LABELS[PAIR_LOWERED_VS_FLOAT]
        self.setMinimumSize(70, 140)
        self.setToolTip("Heat overlay: SQNR per node (dB). Bright = more error.")

    def set_range(self, lo: float, hi: float, label: str = "") -> None:
        self._lo, self._hi = lo, hi
        if label:
            self._label = label
            self.setToolTip(f"Heat overlay: {label}, SQNR in dB. Bright = more error.")
        self.update()

    def value_range(self) -> tuple[float, float]:
        return self._lo, self._hi

    def paintEvent(self, _ev: Any) -> None:  # noqa: N802 - Qt API
        import pyqtgraph as pg

        p = QPainter(self)
        bar = self.rect().adjusted(4, 16, -self.width() // 2, -16)
        grad = QLinearGradient(bar.topLeft(), bar.bottomLeft())
        cmap = pg.colormap.get(HEAT_MAP)
        for i in range(11):
            grad.setColorAt(i / 10, cmap.map(1.0 - i / 10, mode="qcolor"))
        p.fillRect(bar, grad)
        p.setPen(self.palette().text().color())
        x = bar.right() + 4
        p.drawText(x, bar.top() + 10, f"{self._lo:.0f} dB")
        p.drawText(x, bar.bottom(), f"{self._hi:.0f} dB")
        p.drawText(4, 12, "SQNR")
        p.end()


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

        self.summary = QLabel("No numerics yet: run Numerics to compare float, fake-quant and "
                              "the lowered program layer by layer.")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heat_metric = QComboBox()
        for pair in (PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ, PAIR_LOCAL, PAIR_FQ_VS_FLOAT):
            self.heat_metric.addItem(PAIR_LABELS[pair], pair)
        self.heat_metric.setToolTip("Metric used by the heat overlay on the graph")
        self.heat_metric.currentIndexChanged.connect(self._emit_heat)
        self.scatter_ref = QComboBox()
        self.scatter_ref.addItem("fake-quant reference", "fake_quant")
        self.scatter_ref.addItem("float reference", "float")
        self.scatter_ref.currentIndexChanged.connect(lambda _i: self._show_layer())

        self.sqnr_plot = _white_plot()
        self.sqnr_plot.setMinimumHeight(140)
        self.scatter_plot = _white_plot("reference vs lowered")
        self.scatter_plot.setLabel("bottom", "reference")
        self.scatter_plot.setLabel("left", "lowered")
        self.float_hist = _white_plot("float reference values")
        self.int_hist = _white_plot("lowered values on the int8 grid")
        self.colorbar = ColorBar()
        self.colorbar.setMinimumSize(70, 100)
        self.colorbar.setMaximumWidth(90)
        self.layer_label = QLabel("")
        self.layer_label.setWordWrap(True)
        self.layer_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
        hists.addWidget(self.float_hist)
        hists.addWidget(self.int_hist)
        row = QSplitter(Qt.Orientation.Horizontal)
        row.addWidget(self.sqnr_plot)
        row.addWidget(scatter_box)
        row.addWidget(hists)
        row.addWidget(self.colorbar)
        for i, k in enumerate((6, 3, 3, 0)):
            row.setStretchFactor(i, k)
        row.setSizes([600, 300, 300, 80])
        self.splitter = row
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.layer_label)
        lay.addWidget(row, 1)

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
            self.summary.setText("No numerics yet.")
            self._clear_layer()
            self.heatChanged.emit({})
            return
        self._items = _fill_sqnr_plot(plot, result, PAIRS)
        for item in self._items:
            item.sigPointsClicked.connect(self._on_points_clicked)
        plot.addItem(self._marker)
        self.summary.setText(_summary(result))
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
        ys = [_plot_y(m.sqnr_db) for m in (layer.metric(p) for p in PAIRS) if m is not None]
        self._marker.setData([layer.index] * len(ys), ys)
        self.layer_label.setText(_layer_text(layer))
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


def _fmt_metric(label: str, m: Any) -> str:
    if m is None:
        return f"{label}: –"
    sq = "exact" if m.identical else f"{m.sqnr_db:.1f} dB"
    lsb = f", max {m.max_lsb:.0f} LSB" if m.max_lsb is not None else ""
    return f"{label}: {sq} (cos {m.cosine:.4f}, max abs {m.max_abs:.3g}{lsb})"


def _layer_text(l: LayerResult) -> str:
    parts = [f"<b>{l.node_id}</b> — {l.target}"
             + (f" — {l.module_path}" if l.module_path else "")
             + (" — reference derived (no debug handle)" if l.reference == "derived" else "")]
    parts.append(" · ".join(_fmt_metric(name, l.metric(p)) for name, p in
                            (("local", PAIR_LOCAL), ("vs fake-quant", PAIR_LOWERED_VS_FQ),
                             ("vs float", PAIR_LOWERED_VS_FLOAT),
                             ("fake-quant vs float", PAIR_FQ_VS_FLOAT))))
    return "<br>".join(parts)


def _summary(r: NumericsResult) -> str:
    bits = [f"{r.model} · {r.target} · {r.flow} · {r.n_inputs} sample(s) ({r.inputs})"]
    for o in r.outputs:
        m = o.vs_float
        if m is not None:
            t1 = f", top-1 agreement {o.top1_vs_float:.0%}" if o.top1_vs_float is not None else ""
            bits.append(f"output {o.index}: lowered vs float {'exact' if m.identical else f'{m.sqnr_db:.1f} dB'}{t1}")
    diverged = [s for s in r.stages if s.status == "diverged"]
    neutral = [s for s in r.stages if s.status == "neutral"]
    bits.append(f"{len(neutral)} runnable stage(s) neutral, {len(diverged)} changed the numbers"
                + (": " + "; ".join(f"{s.stage} first at {s.first_diverging}" for s in diverged)
                   if diverged else ""))
    return " — ".join(bits)


__all__ = ["NumericsView", "ColorBar", "error_colors", "error_values", "heat_range",
           "render_sqnr_png", "numerics_worker_arguments", "SQNR_CAP_DB"]
