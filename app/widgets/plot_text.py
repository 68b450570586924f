"""Text on pyqtgraph plots that never leaves its axes or lands on other text.

- `PlotAnnotations`: TextItems pinned to data points. Each is placed with the first anchor (above, below,
  beside the point) whose box lies inside the ViewBox and clear of the annotations placed before it; one
  that fits nowhere is hidden, and its words stay in the plot's tooltip. Re-placed on every resize/zoom.
- `legend_above(plot)`: a LegendItem in the plot's title row, outside the data, that never covers a point.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, QSizeF

ABOVE = ((0.5, 1.0), (0.0, 1.0), (1.0, 1.0))
BELOW = ((0.5, 0.0), (0.0, 0.0), (1.0, 0.0))
BESIDE = ((-0.02, 0.5), (1.02, 0.5))
ANCHORS = ABOVE + BELOW + BESIDE
GAP_PX = 4                        # between a point and its text


class PlotAnnotations(QObject):
    def __init__(self, plot: Any) -> None:
        super().__init__()
        self.plot = plot
        self.vb = plot.getViewBox()
        self.items: list[tuple[Any, float, float, Sequence[tuple[float, float]], float]] = []
        self.vb.sigResized.connect(self.place)
        self.vb.sigRangeChanged.connect(self.place)

    def clear(self) -> None:
        for item, *_ in self.items:
            self.plot.removeItem(item)
        self.items = []

    def add(self, text: str, x: float, y: float, color: str,
            anchors: Sequence[tuple[float, float]] = ANCHORS, gap: float = GAP_PX) -> Any:
        """A text at data point (x, y); `anchors` are tried in order (TextItem anchors); `gap` pixels
        between the point and the text (more beside a big marker)."""
        import pyqtgraph as pg

        item = pg.TextItem(text, color=color)
        item.setZValue(20)
        self.plot.addItem(item, ignoreBounds=True)
        self.items.append((item, x, y, tuple(anchors), gap))
        self.place()
        return item

    def texts(self) -> list[Any]:
        return [it for it, *_ in self.items]

    def place(self, *_: Any) -> None:
        box = self.vb.sceneBoundingRect()
        if box.width() < 4 or box.height() < 4:
            return
        taken: list[QRectF] = []
        for item, x, y, anchors, gap in self.items:
            size = item.textItem.boundingRect().size()
            at = self.vb.mapViewToScene(QPointF(x, y))
            rect = next(((a, r) for a in anchors for r in [_rect(at, size, a, gap)]
                         if box.contains(r) and not any(r.intersects(t) for t in taken)), None)
            if rect is None:
                item.setVisible(False)
                continue
            (ax, ay), r = rect
            item.setAnchor((ax, ay))
            # the anchor point, `gap` pixels off the data point, back in view coordinates
            pin = QPointF(r.left() + r.width() * ax, r.top() + r.height() * ay)
            item.setPos(self.vb.mapSceneToView(pin))
            item.setVisible(True)
            taken.append(r)


def _rect(at: QPointF, size: QSizeF, anchor: tuple[float, float], gap: float = GAP_PX) -> QRectF:
    """The scene box of a text of `size` anchored at `at`, `gap` pixels away from the point."""
    ax, ay = anchor
    dx = -gap if ax > 0.99 else (gap if ax < 0.01 else 0.0)
    dy = -gap if ay > 0.99 else (gap if ay < 0.01 else 0.0)
    return QRectF(at.x() - size.width() * ax + dx, at.y() - size.height() * ay + dy, size.width(), size.height())


def legend_above(plot: Any, columns: int = 4, text_color: str = "#37474f", size: str = "8pt") -> Any:
    """A legend in the plot's title row (above the ViewBox, outside the data): curves added to the
    plot with a `name` after this call appear in it. It takes as many columns (up to `columns`) as the
    plot's width holds, and the row grows to hold its lines."""
    import pyqtgraph as pg

    class TitleRowLegend(pg.LegendItem):
        def addItem(self, item: Any, name: str) -> None:  # noqa: N802 - pyqtgraph API
            super().addItem(item, name)
            self.fit_row()

        def removeItem(self, item: Any) -> None:  # noqa: N802 - pyqtgraph API
            super().removeItem(item)
            self.fit_row()

        def clear(self) -> None:
            super().clear()
            self.fit_row()

        def fit_row(self, *_: Any) -> None:
            if self.items:
                cols = self._columns_that_fit(plot.width() - 12)
                if cols != self.columnCount:
                    self.setColumnCount(cols)
            self.updateSize()
            plot.layout.setRowFixedHeight(0, self.height() + 2 if self.items else 0)

        def _columns_that_fit(self, room: float) -> int:
            """The most columns (up to `columns`) whose widest entries, side by side, fit `room`."""
            gap = self.layout.horizontalSpacing() + 4
            widths = [sample.boundingRect().width() + label.boundingRect().width() + gap
                      for sample, label in self.items]
            for cols in range(min(columns, len(widths)), 1, -1):
                if sum(max(widths[c::cols]) for c in range(cols)) <= room:
                    return cols
            return 1

    legend = TitleRowLegend(colCount=columns, labelTextColor=text_color, labelTextSize=size, verSpacing=0,
                            horSpacing=14, frame=False)
    legend.layout.setContentsMargins(2, 0, 2, 0)
    plot.legend = legend
    legend.setParentItem(plot)
    legend.anchor(itemPos=(1, 0), parentPos=(1, 0), offset=(-6, 0))
    plot.getViewBox().sigResized.connect(legend.fit_row)
    legend.fit_row()
    return legend
