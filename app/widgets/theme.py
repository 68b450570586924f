"""Colours and fonts shared by the graph view, legend, inspector and exports."""
from __future__ import annotations

from PySide6.QtGui import QColor, QFont

from backend_core.snapshot.model import (KIND_ATEN, KIND_CMSIS, KIND_DATA, KIND_FALLBACK, KIND_INPUT,
                                         KIND_LABELS, KIND_PLUMBING, KIND_QUANT, KIND_WEIGHT)

# fill, border, text per node kind (fills match backend_core.report.dot_export, lightened)
KIND_STYLE: dict[str, tuple[str, str, str]] = {
    KIND_CMSIS: ("#c8e6c9", "#2e7d32", "#1b3d1d"),
    KIND_FALLBACK: ("#e53935", "#8e0000", "#ffffff"),
    KIND_ATEN: ("#eceff1", "#78909c", "#263238"),
    KIND_DATA: ("#ffe0b2", "#ef6c00", "#4e2600"),
    KIND_QUANT: ("#e1d5f5", "#5e35b1", "#2a1458"),
    KIND_PLUMBING: ("#f5f5f5", "#bdbdbd", "#616161"),
    KIND_INPUT: ("#bbdefb", "#1565c0", "#0d2c52"),
    KIND_WEIGHT: ("#eceff1", "#b0bec5", "#546e7a"),
    "group": ("#fffde7", "#8d6e63", "#3e2723"),
}
LEGEND_ORDER = (KIND_CMSIS, KIND_FALLBACK, KIND_ATEN, KIND_DATA, KIND_QUANT, KIND_PLUMBING,
                KIND_INPUT, KIND_WEIGHT)
LEGEND_LABELS = dict(KIND_LABELS)

# diff / state overlays
ADDED = QColor("#2e7d32")
REMOVED = QColor("#c62828")
REWRITTEN = QColor("#ef6c00")
SELECTED = QColor("#1565c0")
MATCH = QColor("#fbc02d")
EDGE = QColor("#78909c")
EDGE_LABEL = QColor("#455a64")
CLUSTER_FILLS = ("#f3f6fa", "#e9eef5", "#dfe7f0", "#d5dfeb")
CLUSTER_BORDER = QColor("#9fb3c8")
BACKGROUND = QColor("#ffffff")
HEAT_NONE_FILL = QColor("#f4f6f7")      # heat overlay: node without numerics
HEAT_NONE_TEXT = QColor("#90a4ae")


def kind_colors(kind: str) -> tuple[QColor, QColor, QColor]:
    fill, border, text = KIND_STYLE.get(kind, KIND_STYLE[KIND_ATEN])
    return QColor(fill), QColor(border), QColor(text)


def label_font(pixel_size: int = 11, bold: bool = False) -> QFont:
    """Scene fonts are sized in pixels = layout points, so labels fit the boxes dot placed."""
    f = QFont("DejaVu Sans")
    f.setStyleHint(QFont.StyleHint.SansSerif)
    f.setPixelSize(pixel_size)
    f.setBold(bold)
    return f


def mono_font(point_size: float = 9.0) -> QFont:
    f = QFont("DejaVu Sans Mono")
    f.setStyleHint(QFont.StyleHint.Monospace)
    f.setPointSizeF(point_size)
    return f
