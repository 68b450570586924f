"""The per-layer SQNR plot, shared by the Numerics tab and the CLI's `--plot` PNG.

One function fills a pyqtgraph PlotItem so the widget and the offscreen export draw the same
curves; pyqtgraph is imported lazily (it is heavy and the CLI may never plot).
"""
from __future__ import annotations

import os
from typing import Any

from app.widgets.plot_text import legend_above

from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LABELS, PAIR_LOCAL,
                                           PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ, PAIRS,
                                           NumericsResult)


# Curves on the SQNR plot, bottom to top of the legend.
CURVES = ((PAIR_LOWERED_VS_FLOAT, (31, 119, 180), "o"), (PAIR_LOWERED_VS_FQ, (255, 127, 14), "t"),
          (PAIR_FQ_VS_FLOAT, (148, 103, 189), "d"), (PAIR_LOCAL, (214, 39, 40), "s"))
PLOT_CAP_DB = 100.0      # identical tensors (capped at SQNR_CAP_DB) are drawn at this height


def plot_y(sqnr: float) -> float:
    """Height of an SQNR on the plot (bit-exact layers are drawn at PLOT_CAP_DB)."""
    return min(sqnr, PLOT_CAP_DB)


def white_plot(title: str | None = None) -> Any:
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


def _ensure_app() -> Any:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([])


def fill_sqnr_plot(plot: Any, result: NumericsResult, pairs: tuple[str, ...]) -> list[Any]:
    """Draws one curve per pair in `pairs`; returns the curve items (their points carry node ids)."""
    import pyqtgraph as pg

    plot.clear()
    plot.showGrid(x=True, y=True, alpha=0.3)
    plot.setLabel("left", "SQNR (dB)")
    plot.getAxis("left").setToolTip(f"SQNR in dB; bit-exact layers are drawn at {PLOT_CAP_DB:.0f} dB")
    plot.setLabel("bottom", "layer (final graph, topological order)")
    if plot.legend is None:   # above the axes, outside the data: it never covers a point
        legend_above(plot, columns=4)
    else:
        plot.legend.clear()
    items = []
    xs = [lr.index for lr in result.layers]
    for pair, color, symbol in CURVES:
        if pair not in pairs:
            continue
        pts = [(lr.index, plot_y(pm.sqnr_db), lr.node_id) for lr in result.layers
               if (pm := lr.metric(pair)) is not None]
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
        ys = [plot_y(m.sqnr_db) for lr in result.layers for m in (lr.metric(p) for p in pairs) if m is not None]
        if ys:
            plot.setYRange(min(min(ys) - 5, 0.0), PLOT_CAP_DB + 8, padding=0)
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
    fill_sqnr_plot(plot, result, pairs)
    app.processEvents()
    exp = ImageExporter(plot)
    exp.parameters()["width"] = int(width)
    exp.parameters()["height"] = int(height)
    exp.export(str(path))
    win.close()
    win.deleteLater()
    app.processEvents()
    return str(path)
