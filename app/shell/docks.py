"""Docks that collapse instead of taking room from the graph: a side dock folds to a thin strip with
one button, the Details dock folds to its row of tabs (a click on a tab opens it again). Each dock keeps
the size it had, so unfolding gives it back; the window remembers which docks are folded
(app.shell.window_settings)."""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (QDockWidget, QHBoxLayout, QMainWindow, QStackedWidget, QTabWidget, QToolButton,
                               QWidget)

from app.widgets.elided_label import ElidedLabel

QWIDGETSIZE_MAX = 16777215
STRIP = 26                      # width of a folded side dock


def _button(text: str, tip: str, parent: QWidget) -> QToolButton:
    b = QToolButton(parent)
    b.setText(text)
    b.setToolTip(tip)
    b.setAutoRaise(True)
    b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return b


class DockCollapser(QObject):
    """Folds one dock. Side docks: the dock's widget is hidden and the dock narrowed to STRIP; the
    Details dock (a QTabWidget): its pages are hidden and the dock shrunk to the tab bar."""

    changed = Signal(bool)

    def __init__(self, window: QMainWindow, dock: QDockWidget, side: bool) -> None:
        super().__init__(dock)
        self.window, self.dock, self.side = window, dock, side
        self.collapsed = False
        self._size = 0
        dock.topLevelChanged.connect(self._floated)

    def _pages(self) -> QWidget | None:
        w = self.dock.widget()
        return w.findChild(QStackedWidget) if isinstance(w, QTabWidget) else None

    def toggle(self) -> None:
        self.set_collapsed(not self.collapsed)

    @property
    def unfolded_size(self) -> int:
        """The width (side dock) or height (Details) it has, or had before it was folded."""
        if self.collapsed:
            return self._size
        return self.dock.width() if self.side else self.dock.height()

    def _floated(self, floating: bool) -> None:
        if floating:
            self.set_collapsed(False)

    def set_collapsed(self, on: bool, unfolded_size: int = 0) -> None:
        """Fold or unfold; `unfolded_size`: the size to give back on unfolding (a remembered fold)."""
        if on == self.collapsed or (on and self.dock.isFloating()):
            return
        self.collapsed = on
        horizontal = Qt.Orientation.Horizontal if self.side else Qt.Orientation.Vertical
        if on:
            self._size = unfolded_size or (self.dock.width() if self.side else self.dock.height())
            if self.side:
                self.dock.widget().hide()
                self.dock.setMaximumWidth(STRIP)
            else:
                pages = self._pages()
                if pages is not None:
                    pages.hide()
                tabs = self.dock.widget()
                bar = tabs.tabBar().sizeHint().height() if isinstance(tabs, QTabWidget) else 24
                self.dock.setMaximumHeight(bar + 2)
        else:
            if self.side:
                self.dock.setMaximumWidth(QWIDGETSIZE_MAX)
                self.dock.widget().show()
            else:
                self.dock.setMaximumHeight(QWIDGETSIZE_MAX)
                pages = self._pages()
                if pages is not None:
                    pages.show()
            if self._size > STRIP + 10:
                self.window.resizeDocks([self.dock], [self._size], horizontal)
        self.changed.emit(on)


class DockTitleBar(QWidget):
    """A side dock's title: its name, fold, float and close; folded, only the unfold button."""

    def __init__(self, dock: QDockWidget, collapser: DockCollapser, fold_left: bool) -> None:
        super().__init__(dock)
        self.dock, self.collapser = dock, collapser
        self.setObjectName(f"{dock.objectName()}Title")
        self._fold_left = fold_left
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 1, 2, 1)
        lay.setSpacing(0)
        self.title = ElidedLabel(dock.windowTitle(), self)
        self.title.setStyleSheet("font-weight: bold")
        self.fold = _button("", "", self)
        self.fold.clicked.connect(collapser.toggle)
        self.float_btn = _button("⧉", "Float this panel in its own window", self)
        self.float_btn.clicked.connect(lambda: dock.setFloating(not dock.isFloating()))
        self.close_btn = _button("✕", "Close this panel (View menu shows it again)", self)
        self.close_btn.clicked.connect(dock.close)
        lay.addWidget(self.title, 1)
        for b in (self.fold, self.float_btn, self.close_btn):
            lay.addWidget(b)
        collapser.changed.connect(self._update)
        self._update(False)

    def _update(self, folded: bool) -> None:
        opens_to_left = self._fold_left != folded       # the arrow points where the panel goes
        self.fold.setText("◂" if opens_to_left else "▸")
        self.fold.setToolTip(("Unfold" if folded else "Fold") + f" the {self.dock.windowTitle()} panel")
        for w in (self.title, self.float_btn, self.close_btn):
            w.setVisible(not folded)
        lay = self.layout()
        if lay is not None:
            lay.setContentsMargins(0 if folded else 6, 1, 0 if folded else 2, 1)


class DetailsCorner(QWidget):
    """Fold, float and close for the Details dock, in its tab bar's corner (the dock has no title bar of
    its own: its tabs are the title, one row less taken from the graph)."""

    def __init__(self, dock: QDockWidget, tabs: QTabWidget, collapser: DockCollapser) -> None:
        super().__init__(tabs)
        self.setObjectName("DetailsCorner")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 2, 0)
        lay.setSpacing(0)
        self.fold = _button("", "", self)
        self.fold.clicked.connect(collapser.toggle)
        self.float_btn = _button("⧉", "Float the Details panel in its own window", self)
        self.float_btn.clicked.connect(lambda: dock.setFloating(not dock.isFloating()))
        self.close_btn = _button("✕", "Close the Details panel (View menu shows it again)", self)
        self.close_btn.clicked.connect(dock.close)
        for b in (self.fold, self.float_btn, self.close_btn):
            lay.addWidget(b)
        collapser.changed.connect(self._update)
        def tab_clicked(_i: int) -> None:
            if collapser.collapsed:
                collapser.set_collapsed(False)

        tabs.tabBarClicked.connect(tab_clicked)
        self._update(False)

    def _update(self, folded: bool) -> None:
        self.fold.setText("▴" if folded else "▾")
        self.fold.setToolTip("Unfold the Details panel (Ctrl+J)" if folded else
                             "Fold the Details panel to its tabs: more room for the graph (Ctrl+J)")


def collapsible_docks(window: QMainWindow, sides: dict[QDockWidget, bool], details: QDockWidget,
                      tabs: QTabWidget) -> dict[str, DockCollapser]:
    """Collapsers by dock object name; `sides` maps a side dock to True when it sits on the left."""
    out: dict[str, DockCollapser] = {}
    for dock, left in sides.items():
        c = DockCollapser(window, dock, side=True)
        dock.setTitleBarWidget(DockTitleBar(dock, c, fold_left=left))
        out[dock.objectName()] = c
    c = DockCollapser(window, details, side=False)
    details.setTitleBarWidget(QWidget(details))          # no title row: the tabs carry the buttons
    tabs.setCornerWidget(DetailsCorner(details, tabs, c), Qt.Corner.TopRightCorner)
    out[details.objectName()] = c
    return out


def add_dock(win: QMainWindow, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    """A movable, closable, floatable dock named `name` (its state is saved by that name)."""
    dock = QDockWidget(title, win)
    dock.setObjectName(name)
    dock.setWidget(widget)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                     | QDockWidget.DockWidgetFeature.DockWidgetClosable
                     | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
    win.addDockWidget(area, dock)
    return dock
