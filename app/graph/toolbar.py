"""The graph pane's widgets: toolbar (search box, zoom, view toggles, next fallback, legend)
and the compare split (before | after views with titles and legends).

Built here so GraphPanel stays about showing stages; the widgets and actions are stored on the
panel (`act_fit`, `view`, `left`, ...) because tests and the main window's menus use them.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QLineEdit, QSplitter, QToolBar, QVBoxLayout, QWidget

from .graph_view import GraphView
from .legend import HeatLegend, Legend

from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

if TYPE_CHECKING:
    from .graph_panel import GraphPanel


def add_action(panel: GraphPanel, tb: QToolBar, text: str, tip: str, key: str,
               slot: Callable[..., Any]) -> QAction:
    """A toolbar action owned by the panel, with a window-wide shortcut."""
    act = QAction(text, panel)
    act.setToolTip(tip)
    if key:
        act.setShortcut(QKeySequence(key))
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    act.triggered.connect(slot)
    tb.addAction(act)
    return act


def add_toggle(panel: GraphPanel, tb: QToolBar, text: str, tip: str, key: str, name: str) -> QAction:
    """A checkable action mirroring the ViewState toggle `name`."""
    act = add_action(panel, tb, text, tip, key, lambda on: panel.state.set_toggle(name, on))
    act.setCheckable(True)
    act.setChecked(bool(getattr(panel.state, name)))
    return act


def build_graph_toolbar(panel: GraphPanel) -> QToolBar:
    """Creates the toolbar and sets the panel's search widgets and actions."""
    tb = QToolBar("Graph", panel)
    tb.setIconSize(QSize(16, 16))
    panel.search = QLineEdit(panel)
    panel.search.setPlaceholderText("Search node name or op…  (Enter: next)")
    panel.search.setClearButtonEnabled(True)
    panel.search.setMaximumWidth(280)
    panel.search.textChanged.connect(lambda _t: panel._search_timer.start())
    panel.search.returnPressed.connect(panel.next_match)
    panel._search_timer = QTimer(panel, singleShot=True, interval=150)
    panel._search_timer.timeout.connect(panel._update_matches)
    tb.addWidget(panel.search)
    panel.match_label = QLabel("", panel)
    tb.addWidget(panel.match_label)
    tb.addSeparator()
    panel.act_fit = add_action(panel, tb, "Fit", "Fit the graph to the view (F)", "F", panel.fit)
    add_action(panel, tb, "+", "Zoom in (+)", "+", lambda: panel.view.zoom(1.25))
    add_action(panel, tb, "−", "Zoom out (-)", "-", lambda: panel.view.zoom(0.8))
    tb.addSeparator()
    panel.act_qparams = add_toggle(panel, tb, "Q params", "Show quantization parameters on edges (Q)",
                                   "Q", "show_qparams")
    panel.act_weights = add_toggle(panel, tb, "Weights", "Draw weights and scratch buffers as nodes (W)",
                                   "W", "show_weights")
    panel.act_compare = add_toggle(panel, tb, "Compare", "Split view: previous stage | this stage (C)",
                                   "C", "compare")
    tb.addSeparator()
    panel.act_next_fb = add_action(panel, tb, "Next fallback", "Select the next portable fallback (F3)",
                                   "F3", panel.next_fallback)
    add_action(panel, tb, "Reset groups", "Back to the automatic grouping", "", panel.reset_groups)
    panel.act_legend = add_action(panel, tb, "Legend", "Show the colour legend (L)", "L",
                                  lambda _on: panel._update_legends())
    panel.act_legend.setCheckable(True)
    panel.act_legend.setChecked(True)
    return tb


def _title_label() -> QLabel:
    lab = QLabel()
    lab.setStyleSheet("background:#eceff1; color:#37474f; padding:2px 8px; font-weight:bold")
    return lab


def _titled(panel: GraphPanel, title: QLabel, view: GraphView) -> QWidget:
    box = QWidget(panel)
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(0)
    lay.addWidget(title)
    lay.addWidget(view, 1)
    return box


def build_compare_split(panel: GraphPanel) -> QSplitter:
    """Creates the split (left: previous stage, hidden until Compare; right: the main view)
    and sets the panel's views, titles and legends."""
    split = QSplitter(Qt.Orientation.Horizontal, panel)
    panel.left = GraphView(panel)
    panel.view = GraphView(panel)
    panel.left_title = _title_label()
    panel.main_title = _title_label()
    panel.left_box = _titled(panel, panel.left_title, panel.left)
    split.addWidget(panel.left_box)
    split.addWidget(_titled(panel, panel.main_title, panel.view))
    panel.left_box.hide()
    panel.main_title.hide()
    panel.legend = Legend(panel.view)
    panel.view.legend = panel.legend
    panel.legend.reposition()
    panel.heat_legend = HeatLegend(panel.view)
    panel.view.heat_legend = panel.heat_legend
    panel.heat_legend.reposition()
    return split
