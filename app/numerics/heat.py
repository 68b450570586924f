"""Heat overlay of the graph from a numerics result: SQNR per final-graph node, its colours
and the colour bar of the Numerics tab.

The graph only receives {node id: QColor}; the value range and colour map live here so the
graph's legend and this colour bar agree.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtGui import QLinearGradient, QPainter
from PySide6.QtWidgets import QWidget

from backend_core.analyses.numerics.results import PAIR_LABELS, PAIR_LOWERED_VS_FLOAT, NumericsResult

from app.numerics.plot import PLOT_CAP_DB

HEAT_MAP = "inferno"


def error_values(result: NumericsResult, pair: str = PAIR_LOWERED_VS_FLOAT) -> dict[str, float]:
    """Per final-graph node: SQNR (dB) of `pair`; lower means more error."""
    out = {}
    for lr in result.layers:
        m = lr.metric(pair)
        if m is not None:
            out[lr.node_id] = min(m.sqnr_db, PLOT_CAP_DB)
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
