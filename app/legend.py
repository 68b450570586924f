"""The colour legend of the graph view: node kinds plus the diff overlays."""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from . import theme


class _Swatch(QWidget):
    def __init__(self, fill: QColor, border: QColor, dashed: bool = False, warn: bool = False) -> None:
        super().__init__()
        self._fill, self._border, self._dashed, self._warn = fill, border, dashed, warn
        self.setFixedSize(QSize(22, 14))

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(self._border, 2 if self._dashed or self._fill.alpha() == 0 else 1.2)
        if self._dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.setBrush(self._fill)
        p.drawRoundedRect(QRectF(1, 1, 18, 12), 3, 3)
        if self._warn:
            p.setPen(QPen(QColor("#5d4037"), 0.8))
            p.setBrush(QColor("#ffca28"))
            p.drawEllipse(QRectF(13, 0, 8, 8))
        p.end()


class Legend(QWidget):
    """One row: a swatch and a label per node kind, then the compare/diff outlines."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)
        lay.setSpacing(4)
        for kind in theme.LEGEND_ORDER:
            fill, border, _ = theme.kind_colors(kind)
            lay.addWidget(_Swatch(fill, border, warn=kind == "portable_fallback"))
            lay.addWidget(self._label(theme.LEGEND_LABELS[kind]))
            lay.addSpacing(6)
        clear = QColor(0, 0, 0, 0)
        for text, color, dashed in (("added", theme.ADDED, False), ("rewritten", theme.REWRITTEN, False),
                                    ("removed (compare)", theme.REMOVED, True)):
            lay.addWidget(_Swatch(clear, color, dashed))
            lay.addWidget(self._label(text))
            lay.addSpacing(6)
        lay.addStretch(1)

    @staticmethod
    def _label(text: str) -> QLabel:
        lab = QLabel(text)
        f = lab.font()
        f.setPointSizeF(max(7.5, f.pointSizeF() - 1))
        lab.setFont(f)
        return lab
