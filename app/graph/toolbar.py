"""The graph pane's widgets: the toolbar (search box, zoom, view toggles, next fallback, legend)
and the compare split (before | after views with titles and legends).

Classes that receive the callables they trigger (no back-reference to GraphPanel, so no import
cycle); GraphPanel keeps aliases of their actions and views because the menus and tests use them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QLineEdit, QSplitter, QToolBar, QVBoxLayout, QWidget

from app.graph.view import GraphView
from app.widgets.legend import HeatLegend, Legend
from app.widgets.theme import TITLE_STYLE, icon


@dataclass(frozen=True)
class ToolbarActions:
    """What the toolbar's buttons do (GraphPanel's methods, handed in)."""

    fit: Callable[[], Any]
    zoom: Callable[[float], Any]
    set_toggle: Callable[[str, bool], Any]
    next_fallback: Callable[[], Any]
    reset_groups: Callable[[], Any]
    legend_toggled: Callable[[], Any]
    search_changed: Callable[[], Any]
    search_next: Callable[[], Any]


class GraphToolbar(QToolBar):
    """Search box with a debounce timer, zoom, the Q params / Weights / Compare toggles, Next fallback,
    Reset groups and Legend."""

    def __init__(self, actions: ToolbarActions, toggles: dict[str, bool], parent: QWidget) -> None:
        super().__init__("Graph", parent)
        self.setIconSize(QSize(16, 16))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search node name or op…  (Enter: next)")
        self.search.setClearButtonEnabled(True)
        self.search.setMaximumWidth(280)
        self.search_timer = QTimer(self, singleShot=True, interval=150)
        self.search_timer.timeout.connect(actions.search_changed)
        self.search.textChanged.connect(lambda _t: self.search_timer.start())
        self.search.returnPressed.connect(actions.search_next)
        self.addWidget(self.search)
        self.match_label = QLabel("", self)
        self.addWidget(self.match_label)
        self.addSeparator()
        self.act_fit = self._action("Fit", "Fit the graph to the view (F)", "F", actions.fit, "fit")
        self._action("", "Zoom in (+)", "+", lambda: actions.zoom(1.25), "zoom-in")
        self._action("", "Zoom out (-)", "-", lambda: actions.zoom(0.8), "zoom-out")
        self.addSeparator()
        toggle = actions.set_toggle
        self.act_qparams = self._toggle("Q params", "Show quantization parameters on edges (Q)", "Q",
                                        "show_qparams", toggle, toggles)
        self.act_weights = self._toggle("Weights", "Draw weights and scratch buffers as nodes (W)", "W",
                                        "show_weights", toggle, toggles)
        self.act_compare = self._toggle("Compare", "Split view: previous stage | this stage (C)", "C",
                                        "compare", toggle, toggles, "compare")
        self.addSeparator()
        self.act_next_fb = self._action("Next fallback", "Select the next portable fallback (F3)", "F3",
                                        actions.next_fallback, "next-fallback")
        self._action("Reset groups", "Back to the automatic grouping", "", actions.reset_groups)
        self.act_legend = self._action("Legend", "Show the colour legend (L)", "L",
                                       lambda _on: actions.legend_toggled())
        self.act_legend.setCheckable(True)
        self.act_legend.setChecked(True)

    def _action(self, text: str, tip: str, key: str, slot: Callable[..., Any], icon_name: str = "") -> QAction:
        """A toolbar action with a window-wide shortcut (and an icon from resources/icons)."""
        act = QAction(text, self)
        if icon_name:
            act.setIcon(icon(icon_name))
        act.setToolTip(tip)
        if key:
            act.setShortcut(QKeySequence(key))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(slot)
        self.addAction(act)
        return act

    def _toggle(self, text: str, tip: str, key: str, name: str, set_toggle: Callable[[str, bool], Any],
                toggles: dict[str, bool], icon_name: str = "") -> QAction:
        """A checkable action mirroring the ViewState toggle `name`."""
        act = self._action(text, tip, key, lambda on: set_toggle(name, on), icon_name)
        act.setCheckable(True)
        act.setChecked(bool(toggles.get(name)))
        return act


def _titled(parent: QWidget, title: QLabel, view: GraphView) -> QWidget:
    box = QWidget(parent)
    lay = QVBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(0)
    lay.addWidget(title)
    lay.addWidget(view, 1)
    return box


class CompareSplit(QSplitter):
    """Left: the previous stage (hidden until Compare); right: the main view, with the legends."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.left = GraphView(self)
        self.view = GraphView(self)
        self.left_title = QLabel()
        self.main_title = QLabel()
        for lab in (self.left_title, self.main_title):
            lab.setStyleSheet(TITLE_STYLE)
        self.left_box = _titled(self, self.left_title, self.left)
        self.addWidget(self.left_box)
        self.addWidget(_titled(self, self.main_title, self.view))
        self.left_box.hide()
        self.main_title.hide()
        self.legend = Legend(self.view)
        self.view.legend = self.legend
        self.legend.reposition()
        self.heat_legend = HeatLegend(self.view)
        self.view.heat_legend = self.heat_legend
        self.heat_legend.reposition()
