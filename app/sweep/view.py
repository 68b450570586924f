"""The sweep table: a filter box over a sortable table of a sweep folder's jobs.

Signals:
    openRequested(dict): a row was double-clicked: its job ({"model", "target", "flow", "channels_last"}).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QTableView, QVBoxLayout, QWidget

from backend_core.common.errors import CmlensError
from backend_core.orchestration.sweep.dashboard import COLUMNS

from .model import SweepTableModel, read_sweep

OPTIONAL_COLUMNS = ("calib", "top1", "flips")     # hidden when no job of the sweep has them


class SweepView(QWidget):
    openRequested = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder: Path | None = None
        self.model = SweepTableModel()
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter = QLineEdit(placeholderText="filter (any column)")
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.info = QLabel("Open a sweep folder (File > Open sweep folder…, or `cmlens sweep --out DIR`): "
                           "one row per model × configuration; double-click a row to open its lowering.")
        self.info.setWordWrap(True)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)     # Qt's default indicator is descending
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.doubleClicked.connect(self._open_row)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.info)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)

    def open_folder(self, folder: str | Path) -> None:
        """Show a sweep folder; a folder that is not one keeps the earlier table and says why."""
        try:
            rows, manifest = read_sweep(folder)
        except CmlensError as exc:
            self.info.setText(f"{exc.message} {exc.hint}")
            return
        self.folder = Path(folder)
        self.model.set_rows(rows)
        for col, (key, _name) in enumerate(COLUMNS):      # columns no job has (accuracy without evaluate)
            empty = all(r.get(key) in (None, "", "default") for r in rows) if key in OPTIONAL_COLUMNS else False
            self.table.setColumnHidden(col, empty)
        self.table.resizeColumnsToContents()
        done = sum(1 for r in rows if r["status"] == "done")
        bad = sum(1 for r in rows if r["status"] not in ("done", "not run"))
        self.info.setText(f"{self.folder}: {len(rows)} jobs, {done} done, {bad} failed "
                          f"({manifest.get('executor', '')}) — double-click a row to open its lowering")

    def row(self, proxy_row: int) -> dict[str, Any]:
        return self.model.rows[self.proxy.mapToSource(self.proxy.index(proxy_row, 0)).row()]

    def _open_row(self, index: Any) -> None:
        r = self.row(index.row())
        self.openRequested.emit({"model": r["model"], "target": "cortex-" + r["target"], "flow": r["flow"],
                                 "channels_last": r["channels_last"] == "channels-last",
                                 "calib": None if r.get("calib") in (None, "default") else r["calib"]})
