"""Every portable fallback of the final graph with its category and reason; clicking a row
focuses the node in the graph (final stage), selected and centred. With nothing to list the table folds
to its one sentence (`folded(True)`): the window gives the graph the room (app/shell/details_fold.py)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from backend_core.stages.fallback.changed import keep_going_summary

from app.lowering.session import LoweringSession
from app.lowering.view_state import ViewState

COLUMNS = ("Node", "Op", "Category", "Reason", "Module", "Source")


class FallbackTable(QWidget):
    """Signals: folded(bool): the table has nothing to list (True: only the sentence shows) or rows again."""

    folded = Signal(bool)

    def __init__(self, session: LoweringSession, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._folded: bool | None = None
        self.session, self.state = session, state
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.summary = QLabel("", self)
        self.summary.setContentsMargins(6, 3, 6, 3)
        self.summary.setWordWrap(True)          # a --keep-going lowering adds a sentence that is not short
        lay.addWidget(self.summary)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        self.table.setColumnWidth(0, 220)
        self.table.setColumnWidth(1, 200)
        self.table.setColumnWidth(2, 150)
        self.table.setColumnWidth(3, 520)
        self.table.setColumnWidth(4, 110)
        self.table.cellClicked.connect(self._on_click)
        self.table.cellActivated.connect(self._on_click)
        lay.addWidget(self.table, 1)
        lay.addStretch(0)                       # folded (the table hidden): the sentence stays on top
        session.started.connect(self.refresh)
        session.stageAdded.connect(self._on_stage_added)
        session.finished.connect(lambda _s: self.refresh())
        self.refresh()

    def _on_stage_added(self, index: int) -> None:
        if self.session.snapshots[index].kind == "final":
            self.refresh()

    def refresh(self) -> None:
        fbs = self.session.fallbacks()
        final = self.session.final()
        self.table.setRowCount(len(fbs))
        for row, n in enumerate(fbs):
            fb = n.fallback
            src = f"{n.source.file.rsplit('/', 1)[-1]}:{n.source.line}" if n.source else ""
            cells = (n.id, n.target, fb.category if fb else "", fb.message if fb else "",
                     n.module_path, src)
            for col, text in enumerate(cells):
                it = QTableWidgetItem(text)
                it.setData(Qt.ItemDataRole.UserRole, n.id)
                if col == 3 and fb is not None:
                    it.setToolTip("\n".join([fb.message, "", *fb.evidence, "", fb.suggestion]))
                self.table.setItem(row, col, it)
        if final is None:
            self.summary.setText("Fallbacks appear when the final graph is ready.")
        elif not fbs:
            self.summary.setText("No portable fallbacks: every compute op lowered to a CMSIS-NN kernel.")
        else:
            self.summary.setText(f"{len(fbs)} portable fallback{'s' if len(fbs) > 1 else ''} in the final "
                                 "graph. Click a row to show the node.")
        changed = keep_going_summary(self.session.verdicts) if final is not None else ""
        if changed:            # the lowering shown is the tool's workaround: say it where the fallbacks are
            self.summary.setText(f"{self.summary.text()}\n{changed}")
        fold = not fbs
        self.table.setVisible(not fold)
        if fold != self._folded:
            self._folded = fold
            self.folded.emit(fold)

    def is_folded(self) -> bool:
        """Nothing to list: only the sentence shows."""
        return bool(self._folded)

    def folded_height(self) -> int:
        """The height the tab needs folded: its sentence."""
        return self.summary.sizeHint().height()

    def _on_click(self, row: int, _col: int) -> None:
        final = self.session.final()
        it = self.table.item(row, 0)
        if final is None or it is None:
            return
        self.state.focus(final.index, it.data(Qt.ItemDataRole.UserRole))

    def row_count(self) -> int:
        return self.table.rowCount()
