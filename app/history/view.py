"""The History tab: every recorded figure of a model over its commits (a `cmlens history` store: SQLite file
or PostgreSQL URL), one pyqtgraph chart per metric, the changes list beside them.

A click on a point opens that commit's recorded lowering in the window (the report the store keeps: no
lowering again); a click on a change opens the compare of that commit against the one before it (their
recorded facts and reports, as `cmlens history show --html --reports` writes it). The store is read on a
background thread (backend_core.orchestration.history: SQLAlchemy, no torch).

Signals:
    pointOpened(object, str): (a recorded lowering report, a title) to show as the window's lowering.
    changeOpened(object): a compare JSON (the Compare tab draws it).
    message(str): a line for the status bar.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
                               QPushButton, QScrollArea, QSplitter, QVBoxLayout, QWidget)

from app.runtime.background import BackgroundRunner
from backend_core.common.errors import CmlensError

from .loading import HistoryData, change_compare, load_or_error, recorded_report, without_password

CHART_HEIGHT = 150


class HistoryView(QWidget):
    pointOpened = Signal(object, str)
    changeOpened = Signal(object)
    message = Signal(str)
    storeOpened = Signal(str, str)          # (the store as typed, without a password; the model shown)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: HistoryData | None = None
        self._pending: tuple[str, str | None] | None = None     # a remembered store, read when the tab shows
        self._asked = ""                                         # the store as the user gave it
        self._job = -1                                           # the read whose answer is shown
        self.background = BackgroundRunner("cmlens-history", self)
        self.background.done.connect(self._on_loaded)
        self.background.failed.connect(lambda _job, msg: self._say(f"History: {msg.splitlines()[0] if msg else 'failed'}",
                                                               bad=True))
        self.store = QLineEdit(placeholderText="a history store: .cmlens/history.db, or postgresql://…")
        self.store.returnPressed.connect(lambda: self.open_store(self.store.text().strip()))
        browse = QPushButton("Open…")
        browse.clicked.connect(self._browse)
        self.model = QComboBox()
        self.model.setMinimumWidth(260)
        self.model.activated.connect(lambda _i: self.open_store(self.store.text().strip(), self.model.currentData()))
        self.info = QLabel("Open a history store (`cmlens history backfill MODEL --last N` writes one): a chart per "
                           "figure over the commits; click a point for that commit's lowering, a change for the "
                           "compare with the commit before it.")
        self.info.setWordWrap(True)
        self.charts = QWidget()
        self.charts_layout = QVBoxLayout(self.charts)
        self.charts_layout.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.charts)
        self.changes = QListWidget()
        self.changes.setObjectName("historyChanges")
        self.changes.itemActivated.connect(self._on_change)
        self.changes.itemClicked.connect(self._on_change)
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(QLabel("<b>Changes</b> (click: compare with the commit before)"))
        rl.addWidget(self.changes, 1)
        rl.addWidget(self.details)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(scroll)
        split.addWidget(right)
        split.setSizes([700, 420])
        top = QHBoxLayout()
        top.addWidget(QLabel("Store"))
        top.addWidget(self.store, 2)
        top.addWidget(browse)
        top.addWidget(QLabel("Model"))
        top.addWidget(self.model, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.info)
        lay.addWidget(split, 1)

    # ------------------------------------------------------------------ public
    def open_store(self, where: str, model: str | None = None) -> None:
        """Read `where` (a path or a database URL) off the UI thread; the first model unless one is named."""
        if not where:
            self._say("History: name a store first (a .db file or a postgresql:// URL).", bad=True)
            return
        self._pending = None
        self.store.setText(where)
        self._say(f"Reading {where}…")
        self._asked = where
        self._job = self.background.submit(lambda: load_or_error(where, model))

    def remember(self, where: str, model: str | None = None) -> None:
        """The store of the window's last start: named in the field now, read when the tab is first shown
        (a window that never shows the tab never opens it)."""
        if where and self.data is None:
            self.store.setText(where)
            if "://" not in where and not Path(where).is_file():
                return                               # moved or deleted since: named, not read
            self._pending = (where, model or None)
            if self.isVisible():
                self._open_pending()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        self._open_pending()

    def _open_pending(self) -> None:
        if self._pending is not None:
            where, model = self._pending
            self._pending = None
            self.open_store(where, model)

    def chart_names(self) -> list[str]:
        return list(self.data.metrics) if self.data is not None else []

    def open_point(self, index: int) -> None:
        """As a click on the point of commit `index`: its recorded lowering, shown in the window."""
        if self.data is None:
            return
        rec = self.data.history.records[index]
        try:
            report = recorded_report(self.data, index)
        except CmlensError as exc:                   # its kept report was overwritten: say so, show the rest
            self._say(f"History: {exc.message}", bad=True)
            return
        self.details.setText(self.data.commit_text(index))
        if report is None:
            self._say(f"{rec.short}: no lowering report was recorded with this commit (recorded from a JSON "
                      "result without graphs); its figures are shown here.")
            return
        self.pointOpened.emit(report, f"{rec.short} {rec.subject or ''}".strip())
        self._say(f"Showing the lowering recorded at {rec.short} ({rec.subject or ''}): not lowered again.")

    def open_change(self, row: int) -> None:
        """As a click on change `row`: the compare of its commit against the one before it."""
        if self.data is None or not 0 <= row < len(self.data.history.changes):
            return
        change = self.data.history.changes[row]
        self.details.setText(self.data.commit_text(change.index))
        try:
            data = change_compare(self.data, change.index)
        except CmlensError as exc:
            self._say(f"History: {exc.message}", bad=True)
            return
        if data is None:
            self._say(f"{change.commit[:8]}: nothing recorded to compare it with (the commit before it failed, or "
                      "no facts were recorded).")
            return
        self.changeOpened.emit(data)

    def shutdown(self) -> None:
        self.background.shutdown()

    # ------------------------------------------------------------------ internals
    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a history store", "", "History store (*.db);;All files (*)")
        if path:
            self.open_store(path)

    def _say(self, text: str, bad: bool = False) -> None:
        self.info.setText(text)
        self.info.setStyleSheet("color: #b71c1c" if bad else "")
        self.message.emit(text)

    def _on_loaded(self, job: int, data: HistoryData | CmlensError) -> None:
        if job != self._job:                        # an earlier read, answered after the user asked another
            return
        if isinstance(data, CmlensError):           # a damaged, empty or too new store: its cause and the fix
            self._show_nothing()
            self._say(f"History: {data.message} {data.hint}".strip(), bad=True)
            return
        self._close_shown(data)
        self.data = data
        self.model.blockSignals(True)
        self.model.clear()
        for label, key in data.models:
            self.model.addItem(label, key)
        self.model.setCurrentIndex(max(0, self.model.findData(data.model_key)))
        self.model.blockSignals(False)
        self._clear_charts()
        for metric in data.metrics:
            self.charts_layout.addWidget(self._chart(metric))
        self.charts_layout.addStretch(1)
        self.changes.clear()
        for ch in data.history.changes:
            item = QListWidgetItem(f"{ch.commit[:8]}  {ch.text()}  — {(ch.subject or '')[:50]}")
            item.setToolTip(f"{ch.commit} {ch.subject}\n{ch.text()}")
            self.changes.addItem(item)
        asked = self._asked or data.where           # a path as the store's absolute file, a URL without its password
        self.storeOpened.emit(without_password(asked) if "://" in asked else data.where, data.model_key)
        h = data.history
        self._say(f"{h.model}: {len(h.records)} commit(s), {len(h.changes)} change(s), {len(data.metrics)} figure(s) "
                  f"({data.where}). Click a point or a change.")

    def _clear_charts(self) -> None:
        while self.charts_layout.count():
            item = self.charts_layout.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None:
                w.deleteLater()

    def _close_shown(self, new: HistoryData | None = None) -> None:
        """The store shown until now, closed when another replaces it (its engine's connections)."""
        if self.data is not None and (new is None or new.store is not self.data.store):
            self.data.store.close()

    def _show_nothing(self) -> None:
        """No store shown: what another store drew is not left on screen under its error."""
        self._close_shown()
        self.data = None
        self._clear_charts()
        self.changes.clear()
        self.details.setText("")
        self.model.clear()

    def _chart(self, metric: str) -> pg.PlotWidget:
        data = self.data
        assert data is not None
        plot = pg.PlotWidget(background="w")
        plot.setObjectName(f"history:{metric}")
        plot.setFixedHeight(CHART_HEIGHT)
        plot.setTitle(data.label(metric), size="9pt")
        plot.showGrid(x=True, y=True, alpha=0.2)
        xs, ys = data.points(metric)
        plot.plot(xs, ys, pen=pg.mkPen("#1565c0", width=2))
        changed = data.changed_at(metric)
        brushes = [pg.mkBrush("#e53935" if x in changed else "#1565c0") for x in xs]
        # pyqtgraph calls tip(x=..., y=..., data=...) by keyword: the parameters keep those names
        dots = pg.ScatterPlotItem(xs, ys, size=9, brush=brushes, pen=pg.mkPen("w"), hoverable=True,
                                  data=xs, tip=lambda x, y, data: self._tip(int(data), metric))
        def clicked(_item: Any, points: Any, _ev: Any) -> None:
            if points:
                self.open_point(int(points[0].data()))

        dots.sigClicked.connect(clicked)
        plot.addItem(dots)
        for x in data.version_marks:
            plot.addItem(pg.InfiniteLine(pos=x, angle=90, pen=pg.mkPen("#8e24aa", style=Qt.PenStyle.DashLine)))
        for x in data.failed:
            plot.addItem(pg.ScatterPlotItem([x], [0], symbol="x", size=11, brush=pg.mkBrush("#b71c1c")))
        plot.getAxis("bottom").setTicks([[(i, r.short[:7]) for i, r in enumerate(data.history.records)]])
        return plot

    def _tip(self, index: int, metric: str) -> str:
        return self.data.point_tip(index, metric) if self.data is not None else ""

    def _on_change(self, item: QListWidgetItem) -> None:
        self.open_change(self.changes.row(item))
