"""Colours, fonts, style sheet and icons shared by the GUI's views; the colours come from
resources/colors.json, which the HTML report and the Graphviz export read too."""
from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPalette

import resources

from backend_core.common.snapshot.model import (KIND_ATEN, KIND_CMSIS, KIND_DATA, KIND_FALLBACK, KIND_INPUT,
                                         KIND_LABELS, KIND_PLUMBING, KIND_QUANT, KIND_WEIGHT)

_C = resources.colors()


def is_dark_palette() -> bool:
    """The application's palette is dark (a dark system theme): window text lighter than the window."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return False
    pal = app.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < pal.color(QPalette.ColorRole.WindowText).lightness()


# UI text colours for the palette the application runs with (read when the views are first imported,
# after the QApplication exists): resources/colors.json "ui", or "ui_dark" on a dark palette.
_UI = {k: v for k, v in _C["ui_dark" if is_dark_palette() else "ui"].items() if not k.startswith("_")}
# text drawn on the light backgrounds the graph and the plots keep on any palette (the legend chip,
# overlays): always the light theme's colours, never the dark palette's light ones
ON_LIGHT = {k: v for k, v in _C["ui"].items() if not k.startswith("_")}
_OV = _C["overlay"]

# fill, border, text per node kind (resources/colors.json: the HTML report and dot export use the same file)
KIND_STYLE: dict[str, tuple[str, str, str]] = {
    kind: (c["fill"], c["border"], c["text"]) for kind, c in resources.node_kind_colors().items()}
LEGEND_ORDER = (KIND_CMSIS, KIND_FALLBACK, KIND_ATEN, KIND_DATA, KIND_QUANT, KIND_PLUMBING,
                KIND_INPUT, KIND_WEIGHT)
LEGEND_LABELS = dict(KIND_LABELS)

# diff / state overlays
ADDED = QColor(_C["diff"]["added"])
REMOVED = QColor(_C["diff"]["removed"])
REWRITTEN = QColor(_C["diff"]["rewritten"])
SELECTED = QColor(_OV["selected"])
MATCH = QColor(_OV["match"])
PATCHED = QColor(_OV["patched"])       # a schedule: the op runs per patch; the grid on the input
EDGE = QColor(_OV["edge"])
EDGE_LABEL = QColor(_OV["edge_label"])
CLUSTER_FILLS = tuple(_OV["cluster_fills"])
CLUSTER_BORDER = QColor(_OV["cluster_border"])
BACKGROUND = QColor(_OV["background"])
HEAT_NONE_FILL = QColor(_OV["heat_none_fill"])      # heat overlay: node without numerics
HEAT_NONE_TEXT = QColor(_OV["heat_none_text"])

# pre-flight markers on a node: certain to fail on the target / may fail
PREFLIGHT = {k: QColor(v) for k, v in _C["preflight"].items()}

# UI palette for style sheets of small labels
UI = dict(_UI)
OUTCOME_COLORS: dict[str, str] = dict(_C["outcome"])
TITLE_STYLE = f"background:{_UI['title_bg']}; color:{_UI['title_fg']}; padding:2px 8px; font-weight:bold"
MUTED_STYLE = f"color:{_UI['muted']}"
PLACEHOLDER_STYLE = f"color:{_UI['faint']}; font-size:14px"


def app_style_sheet() -> str:
    """resources/styles/app.qss, applied to the QApplication by the shell; on a dark palette its "ui"
    colours are swapped for their "ui_dark" counterparts (one pass, so no colour is swapped twice)."""
    import re

    qss = resources.text("styles", "app.qss")
    if not is_dark_palette():
        return qss
    swap = {v.lower(): _C["ui_dark"][k] for k, v in _C["ui"].items() if k in _C["ui_dark"]}
    return re.sub(r"#[0-9a-fA-F]{6}", lambda m: swap.get(m.group(0).lower(), m.group(0)), qss)


def keep_light(widget) -> None:
    """Give a rich-text view the light paper the graph and the plots keep on any palette: its HTML
    (fallback boxes on pink, coloured spans) is written for a light background, and on a dark palette's
    dark base with light default text it would be light on light."""
    pal = widget.palette()
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        pal.setColor(group, QPalette.ColorRole.Base, QColor("#ffffff"))
        pal.setColor(group, QPalette.ColorRole.Text, QColor(ON_LIGHT["text"]))
    widget.setPalette(pal)


def icon(name: str) -> QIcon:
    """resources/icons/<name>.svg as a QIcon (the app icon and the toolbar icons)."""
    return QIcon(str(resources.path("icons", f"{name}.svg")))


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
