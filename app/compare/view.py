"""N lowerings side by side: one graph pane per side, selection synced by the compare rows (a click
on one side selects the matched nodes on every side: one-to-many and many-to-one too), nodes filled
by how their row changed, an inspector table (the matched op on every side) and a clickable
"what changed" list. The compare itself runs as one Job per side in the job worker (runner.py); the
view only draws its JSON (the one `cmlens compare --json --with-reports` writes). A failed or cancelled run keeps the results
shown before.

Signals: rowSelected(int) (the compare row now selected, -1 none)."""
from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem, QPushButton, QSplitter,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from backend_core.analyses.graph_layout import Layout, compute_layout
from backend_core.orchestration.compare.rows import ops_text

from app.runtime.background import BackgroundRunner

from .model import DELTA_COLORS, SAME, CompareData, read_compare
from .panes import SidePane
from .side_jobs import CompareSideJobs

INSPECTOR_FIELDS = ("status", "category / reason", "ops", "shape", "qparams", "arena alive", "scratch",
                    "out bytes", "instructions", "SQNR", "match", "what changed")


def _cell_value(cell: dict[str, Any] | None, field: str, changes: list[str], match: str) -> str:
    if cell is None:
        return "—" if field != "match" else (match or "absent")
    if field == "status":
        return cell["status"] + (f" (into {cell['fused_into']})" if cell.get("fused_into") else "")
    if field == "category / reason":
        return f"{cell['category']}: {cell['reason']}" if cell.get("category") else ""
    if field == "ops":
        return ops_text(list(cell.get("ops", ()))) or "—"
    if field == "shape":
        return str(cell["shape"]) if cell.get("shape") is not None else ""
    if field == "qparams":
        q = (cell.get("qparams") or {}).get("output")
        return f"{q.get('dtype', '')} s={q['scale']:.4g} zp={q['zero_point']}" if q and "scale" in q else ""
    if field == "match":
        return match
    if field == "what changed":
        return "; ".join(changes)
    key = {"arena alive": "arena_bytes", "scratch": "scratch_bytes", "out bytes": "out_bytes",
           "instructions": "instructions"}.get(field)
    if key:
        v = cell.get(key)
        return "" if v is None else f"{v:,}" + (" B" if field != "instructions" else "")
    if field == "SQNR":
        return "" if cell.get("sqnr_db") is None else f"{cell['sqnr_db']:.1f} dB"
    return ""


class CompareView(QWidget):
    rowSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: CompareData | None = None
        self.row = -1
        self.panes: list[SidePane] = []
        self.side_jobs = CompareSideJobs(self)
        self.side_jobs.started.connect(lambda args: self._busy(True, "Comparing: cmlens " + " ".join(args)))
        self.side_jobs.line.connect(self._on_line)
        self.side_jobs.finished.connect(self._on_finished)
        self.side_jobs.failed.connect(self._on_failed)
        self.layouts = BackgroundRunner("cmlens-compare-layout", self)
        self.layouts.done.connect(self._on_layout)
        self.layouts.failed.connect(lambda _job, msg: self.status.setText(f"Layout failed: {msg}"))
        self._job_side: dict[int, int] = {}
        self._build()

    def _build(self) -> None:
        self.status = QLabel("No compare yet: Tools > Compare with… puts a second lowering next to this one.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.side_jobs.cancel)
        top = QHBoxLayout()
        self.sync_view = QCheckBox("Sync view")
        self.sync_view.setChecked(True)
        self.sync_view.setToolTip("Pan or zoom one side and the others follow to the matched op")
        top.addWidget(self.status, 1)
        top.addWidget(self.sync_view)
        top.addWidget(self.cancel_button)
        self.graphs = QSplitter(Qt.Orientation.Horizontal)
        self.changed = QListWidget()
        self.changed.setObjectName("whatChanged")
        self.changed.currentRowChanged.connect(self._on_changed_clicked)
        self.inspector = QTableWidget(0, 0)
        self.inspector.setObjectName("compareInspector")
        self.inspector.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.inspector.setWordWrap(True)
        self.inspector.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(QLabel("<b>What changed</b> (click: select on every side)"))
        ll.addWidget(self.changed)
        self.row_title = QLabel("<b>Inspector</b>: click a node or a change")
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.row_title)
        rl.addWidget(self.inspector)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(left)
        bottom.addWidget(right)
        bottom.setSizes([420, 700])
        main = QSplitter(Qt.Orientation.Vertical)
        main.addWidget(self.graphs)
        main.addWidget(bottom)
        main.setSizes([460, 300])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(main, 1)

    # ------------------------------------------------------------------ running
    def start(self, side_args: list[str]) -> None:
        """Run the compare of `side_args` (as `cmlens compare` takes them): one Job per side in the job worker;
        the current result stays until it ends."""
        if self.side_jobs.is_running():
            self.status.setText("A compare is running: cancel it first.")
            return
        self.side_jobs.start(side_args)

    def cancel(self) -> None:
        self.side_jobs.cancel()

    def shutdown(self) -> None:
        self.side_jobs.cancel()
        self.layouts.shutdown()

    def _busy(self, busy: bool, text: str) -> None:
        self.cancel_button.setEnabled(busy)
        self.status.setText(text)

    def _on_line(self, text: str) -> None:
        if self.side_jobs.is_running() and text.strip():
            self.status.setText("Comparing… " + text.strip()[:160])

    def _on_failed(self, message: str) -> None:
        self._busy(False, message)
        self.status.setStyleSheet("color: #b71c1c")

    def _on_finished(self, data: dict[str, Any]) -> None:
        self.status.setStyleSheet("")
        try:
            self.show_compare(data)
        except (KeyError, ValueError, TypeError) as exc:
            self._busy(False, f"The compare JSON could not be shown ({exc}); check it with `cmlens compare ... --json F`.")
            return
        self._busy(False, self._summary())

    # ------------------------------------------------------------------ showing
    def show_compare(self, raw: dict[str, Any]) -> None:
        """Show a compare JSON (written with --with-reports, for the graphs)."""
        data = read_compare(raw)
        self.data, self.row = data, -1
        for p in self.panes:
            p.setParent(None)
            p.deleteLater()
        self.panes = []
        self._job_side = {}
        for i, side in enumerate(data.sides):
            pane = SidePane(i, side.label, self)
            pane.nodeClicked.connect(self._on_node_clicked)
            pane.viewMoved.connect(self._on_view_moved)
            self.graphs.addWidget(pane)
            self.panes.append(pane)
            if side.snapshot is None:
                pane.show_message("no graph on this side (a baseline, or a compare JSON without --with-reports)")
                continue
            snap = side.snapshot
            job = self.layouts.submit(partial(compute_layout, snap), channel=f"side{i}")
            self._job_side[job] = i
        self.changed.blockSignals(True)
        self.changed.clear()
        for r in data.changed_rows():
            it = QListWidgetItem(data.change_text(r))
            it.setData(Qt.ItemDataRole.UserRole, r)
            d = data.delta[r]
            if d != SAME:
                it.setBackground(QColor(DELTA_COLORS[d]))
            it.setToolTip(data.change_text(r))
            self.changed.addItem(it)
        self.changed.blockSignals(False)
        self.inspector.clear()
        self.inspector.setColumnCount(len(data.sides))
        self.inspector.setRowCount(len(INSPECTOR_FIELDS))
        self.inspector.setHorizontalHeaderLabels([f"{i + 1}. {s.label}" for i, s in enumerate(data.sides)])
        self.inspector.setVerticalHeaderLabels(list(INSPECTOR_FIELDS))
        self.status.setStyleSheet("")           # what is shown, whoever asked (Tools > Compare, History's change)
        self.status.setText(self._summary())

    def _summary(self) -> str:
        assert self.data is not None
        parts = []
        for d in self.data.raw.get("deltas", ()):
            s = d["side"]
            mem = d.get("memory", {}).get("arena_bytes") or {}
            arena = (f", arena {mem['base']:,} -> {mem['value']:,} B"
                     if mem.get("value") is not None and mem.get("base") is not None else "")
            parts.append(f"side {s + 1} vs 1: +{len(d['fallbacks_added'])} / -{len(d['fallbacks_removed'])} "
                         f"fallbacks{arena}")
        weak = " (weak match: a side has no provenance)" if self.data.raw.get("weak_match") else ""
        return (f"{len(self.data.sides)} sides, {len(self.data.rows)} ops matched{weak}; " + "; ".join(parts)
                + ".  Red: new fallback, green: fallback gone, amber: changed.")

    def _on_layout(self, job: int, layout: Layout) -> None:
        side = self._job_side.pop(job, None)
        if side is None or self.data is None or side >= len(self.panes):
            return
        self.panes[side].set_layout(self.data, layout)
        if self.row >= 0:
            self.panes[side].select(self.data.nodes(self.row, side))

    # ------------------------------------------------------------------ viewport sync
    def _on_view_moved(self, side: int) -> None:
        """Pan or zoom on one side: every other side shows the match of the op in the middle of that
        view (one-to-many: the first of its nodes), at the same zoom and offset."""
        if self.data is None or not self.sync_view.isChecked():
            return
        anchor = self.panes[side].anchor()
        if anchor is None:
            return
        row, offset = anchor
        zoom = self.panes[side].view.zoom_factor()
        for s, pane in enumerate(self.panes):
            if s != side:
                pane.follow(self.data.nodes(row, s), offset, zoom)

    # ------------------------------------------------------------------ selection
    def _on_node_clicked(self, side: int, node_id: str) -> None:
        if self.data is None:
            return
        row = self.data.sides[side].row_of_node.get(node_id)
        if row is not None:
            self.select_row(row)

    def _on_changed_clicked(self, index: int) -> None:
        it = self.changed.item(index)
        if it is not None:
            self.select_row(int(it.data(Qt.ItemDataRole.UserRole)))

    def select_row(self, row: int) -> None:
        """Select one compare row: its nodes on every side, the inspector, the what-changed entry."""
        assert self.data is not None
        self.row = row
        for s, pane in enumerate(self.panes):
            pane.select(self.data.nodes(row, s))
        r = self.data.rows[row]
        where = f" — {r['source']}" if r.get("source") else ""
        self.row_title.setText(f"<b>{r['label']}</b>{where} · {r['change']}")
        for s in range(len(self.data.sides)):
            cell = r["cells"][s]
            for f, field in enumerate(INSPECTOR_FIELDS):
                item = QTableWidgetItem(_cell_value(cell, field, r["changes"][s], r["match"][s] if r["match"] else ""))
                item.setToolTip(item.text())
                self.inspector.setItem(f, s, item)
        self.inspector.resizeRowsToContents()
        for i in range(self.changed.count()):
            if self.changed.item(i).data(Qt.ItemDataRole.UserRole) == row:
                self.changed.blockSignals(True)
                self.changed.setCurrentRow(i)
                self.changed.blockSignals(False)
                break
        else:
            self.changed.blockSignals(True)
            self.changed.clearSelection()
            self.changed.setCurrentRow(-1)
            self.changed.blockSignals(False)
        self.rowSelected.emit(row)
