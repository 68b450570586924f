"""The graph gets the room: while the Fallbacks tab has nothing to list (no portable fallback, or no
lowering yet) the Details dock folds to the tab bar and the table's one sentence; when there are rows, or
another tab is chosen, it opens again to the height the window gives it. A size the user dragged is kept."""
from __future__ import annotations

from typing import Protocol, cast

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabWidget

from app.lowering.fallback_table import FallbackTable


QWIDGETSIZE_MAX = (1 << 24) - 1


class _Window(Protocol):
    """What the fold asks of the main window (app.shell.main_window imports this module)."""

    def details_room(self) -> int: ...
    def fit_details_to_tab(self) -> None: ...
    def resizeDocks(self, docks: list[QDockWidget], sizes: list[int], orientation: Qt.Orientation) -> None: ...  # noqa: N802


class DetailsFold(QObject):
    def __init__(self, window: QMainWindow, dock: QDockWidget, tabs: QTabWidget, table: FallbackTable) -> None:
        super().__init__(window)
        self.window, self.dock, self.tabs, self.table = cast(_Window, window), dock, tabs, table
        self.is_folded = False
        self.open_height = 0
        table.folded.connect(lambda _f: QTimer.singleShot(0, self.apply))
        tabs.currentChanged.connect(lambda _i: QTimer.singleShot(0, self.apply))
        dock.visibilityChanged.connect(lambda shown: shown and QTimer.singleShot(0, self.apply))
        dock.topLevelChanged.connect(lambda _floating: QTimer.singleShot(0, self.refit))

    def folded_height(self) -> int:
        """Tab bar, the sentence, the dock's title and margins."""
        return self.tabs.tabBar().sizeHint().height() + self.table.folded_height() + 8

    def refit(self) -> None:
        """The dock was just laid out open (to the window's room): fold it again if there is nothing to list;
        unfolding gives that height back."""
        self.is_folded = False
        self.apply(open_height=self.window.details_room())

    def apply(self, open_height: int | None = None) -> None:
        """Fold or unfold for the current tab and table (`open_height`: the height to give back later)."""
        if self.dock.isFloating() or not self.dock.isVisible():
            return
        fold = self.tabs.currentWidget() is self.table and self.table.is_folded()
        if fold == self.is_folded:
            return
        self.is_folded = fold
        if fold:                 # the other tabs' minimum heights would hold the dock open: cap it
            self.open_height = open_height or self.dock.height()   # given back on unfold (a dragged size too)
            self.tabs.setMaximumHeight(self.folded_height())
            self.window.resizeDocks([self.dock], [self.folded_height()], Qt.Orientation.Vertical)
        else:
            self.tabs.setMaximumHeight(QWIDGETSIZE_MAX)
            height = max(self.open_height, self.window.details_room())
            self.window.resizeDocks([self.dock], [height], Qt.Orientation.Vertical)
            self.window.fit_details_to_tab()      # a tab with plots takes the room it wants, as on any tab change
