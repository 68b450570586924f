"""MemoryPanel: the lowered model's memory against a board.

Public API (the shell wires it; this package imports no other feature package):
- `MemoryPanel(parent)`; `set_lowering_result(data)` with the lowering worker's `done` message (its
  `memory` key, present when the worker ran with `--memory`), a report dict with `memory`, or the
  `memory` dict itself (None: clear);
- `set_board(name)`: pick a board (names of backend_core.common.boards.specs.all_boards(); "" for none);
- signal `nodeClicked(str)`: the final-graph node id of the op clicked in the timeline;
- signal `boardChanged(str)`: the board picked;
- `node_html(node_id)`: a node's output bytes, where they live (memory id, offset), scratch, constants,
  live bytes at that op, for the inspector;
- `verdict()`: the current verdict dict (or None);
- `bytes_by_node(what)`: {node id: bytes} ("live_bytes", "scratch_bytes", "constant_bytes") to colour the graph;
- `set_fit_model(model)`: the "Fit this board" row (app.memory.fit_row) over an app.memory.fit.FitModel; its
  result is drawn over the timeline (app.memory.fit_view.ScheduleOverlay): before and after on one axis.
The verdict for another board is recomputed here (backend_core.target.memory.attach_board is plain Python);
nothing here imports torch or ExecuTorch."""
from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSplitter,
                               QStackedWidget, QTextBrowser, QVBoxLayout, QWidget)

from backend_core.common.errors import CmlensError
from backend_core.target.memory import attach_board
from backend_core.common.boards.specs import all_boards, board_named, custom_board
from backend_core.target.memory.fit import kib

from app.memory.bars import StackedBars
from app.memory.fit_view import ScheduleOverlay, details_rows
from app.memory.timeline import TimelinePlot
from app.widgets import theme
from app.widgets.elided_label import ElidedLabel

NO_BOARD = "(no board)"
CUSTOM = "custom sizes…"


def memory_of(data: Any) -> dict[str, Any] | None:
    """The memory dict inside a done message / report / memory dict."""
    if not isinstance(data, dict):
        return None
    if "planned_bytes" in data and "timeline" in data:
        return data
    mem = data.get("memory")
    return mem if isinstance(mem, dict) and "planned_bytes" in mem else None


EMPTY = ("The lowered program's RAM and flash against a board, and the bytes alive at each op, appear here "
         "after a lowering (Lower, or open a .pte).")


class MemoryPanel(QWidget):
    nodeClicked = Signal(str)
    boardChanged = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import pyqtgraph as pg

        self.report: dict[str, Any] | None = None
        lay = self._lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        # one row: what was measured (elided, all of it in the tooltip) | the board picker
        self.title = ElidedLabel("no memory report yet: lower a model (the worker runs with --memory)")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        row = QHBoxLayout()
        row.setSpacing(4)
        self.board = QComboBox()
        self.board.addItem(NO_BOARD, "")
        for name, b in all_boards().items():
            self.board.addItem(f"{name}  ({b.core}, {kib(b.ram_bytes)} RAM)", name)
        self.board.addItem(CUSTOM, CUSTOM)
        self.board.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.board.setMinimumContentsLength(22)
        self.board.setToolTip("Check the model against a board: QEMU/FVP boards (kernels/boards.json) and MCUs "
                              "(resources/boards/mcus.json, each row cites its datasheet)")
        self.ram = QLineEdit()
        self.ram.setPlaceholderText("RAM e.g. 256K")
        self.flash = QLineEdit()
        self.flash.setPlaceholderText("flash e.g. 1M")
        self.apply = QPushButton("check")
        for w in (self.ram, self.flash):
            w.setMaximumWidth(110)
        for widget in (self.ram, self.flash, self.apply):
            widget.setVisible(False)
        self.board.currentIndexChanged.connect(self._board_changed)
        self.apply.clicked.connect(self._recompute)
        self.ram.returnPressed.connect(self._recompute)
        self.flash.returnPressed.connect(self._recompute)
        row.addWidget(self.title, 1)
        row.addWidget(QLabel("board"))
        row.addWidget(self.board)
        row.addWidget(self.ram)
        row.addWidget(self.flash)
        row.addWidget(self.apply)
        self.verdict_label = ElidedLabel("")
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        # bars (RAM / flash by kind, legend above them) | live bytes per op | largest tensors, suggestions
        self.bars_plot = pg.PlotWidget(background="w")
        self.bars_plot.setMinimumHeight(90)
        bp = self.bars_plot.getPlotItem()
        bp.setMenuEnabled(False)
        bp.getViewBox().setMouseEnabled(x=True, y=False)
        bp.getAxis("left").setTicks([[(1, "RAM"), (0, "flash")]])
        bp.getAxis("left").setWidth(95)
        bp.setLabel("bottom", "KiB")
        self.bars = StackedBars(bp)
        self.timeline_plot = pg.PlotWidget(background="w")
        self.timeline_plot.setMinimumHeight(90)
        self.timeline = TimelinePlot(self.timeline_plot)
        self.timeline.nodeClicked.connect(self.nodeClicked)
        self.overlay = ScheduleOverlay(self.timeline_plot.getPlotItem())
        self.fit_model: Any = None
        self.fit_row: Any = None
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.setFrameShape(QFrame.Shape.NoFrame)
        self.details.setStyleSheet(theme.MUTED_STYLE)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        for pane, stretch in ((self.bars_plot, 3), (self.timeline_plot, 5), (self.details, 2)):
            self.split.addWidget(pane)
            self.split.setStretchFactor(self.split.count() - 1, stretch)
        self.split.setChildrenCollapsible(False)
        self.split.setSizes([400, 400, 200])            # proportions: the legend of the bars needs width
        self.placeholder = QLabel(EMPTY)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet(theme.PLACEHOLDER_STYLE)
        self.body = QStackedWidget()
        self.body.addWidget(self.placeholder)
        self.body.addWidget(self.split)
        lay.addLayout(row)
        lay.addWidget(self.verdict_label)
        self._fit_at = lay.count()
        lay.addWidget(self.body, 1)

    # -- public API ------------------------------------------------------------------------------
    def set_lowering_result(self, data: Any) -> None:
        """Show the memory report carried by a done message / report / memory dict (None: clear)."""
        self.report = memory_of(data)
        if self.report is None:
            err = data.get("memory", {}).get("error") if isinstance(data, dict) and isinstance(data.get("memory"), dict) else None
            why = ("no memory report" + (f": {html.escape(err)}" if err else
                   " for this lowering (it failed, or the worker ran without --memory)"))
            self.title.setText(why if data is not None else "")
            self.placeholder.setText(EMPTY if data is None else why + ". Lower the model again to get one.")
        self._recompute()

    def set_board(self, name: str) -> None:
        i = self.board.findData(name)
        if i < 0:
            raise ValueError(f"unknown board {name!r}")
        self.board.setCurrentIndex(i)

    def bytes_by_node(self, what: str = "live_bytes") -> dict[str, int]:
        """{final node id: bytes} to colour the graph by bytes: "live_bytes" (planned bytes alive at the
        op), "scratch_bytes" or "constant_bytes"."""
        if self.report is None:
            return {}
        return {s["node"]: int(s[what]) for s in self.report["timeline"] if s.get("node")}

    def verdict(self) -> dict[str, Any] | None:
        return None if self.report is None else self.report.get("verdict")

    def node_html(self, node_id: str) -> str:
        if self.report is None:
            return ""
        step = next((s for s in self.report["timeline"] if s.get("node") == node_id), None)
        if step is None:
            return ""
        out = step.get("out") or {}
        where = (f"memory id {out['mem_id']}, offset {out['offset']:,}" if out.get("mem_id") is not None
                 else "not planned")
        parts = [f"<b>memory</b> (op #{step['index']}): output {out.get('bytes', 0):,} B "
                 f"{out.get('dtype', '')} {out.get('shape', '')} in {where}",
                 f"live planned bytes here: {step['live_bytes']:,} B"
                 + (" <b>(the peak)</b>" if step["index"] == self.report["peak_index"] else "")]
        if step["scratch_bytes"]:
            parts.append(f"CMSIS-NN scratch: {step['scratch_bytes']:,} B (planned, inside the arena)")
        if step["constant_bytes"]:
            parts.append(f"constants (flash): {step['constant_bytes']:,} B")
        sched = self.fit_model.result if self.fit_model is not None else None
        if sched and node_id in (sched.get("patched_nodes") or []):
            g = sched["chosen"]["grid"]
            parts.append(f"<b>runs per patch</b>: {g[0] * g[1]} times ({g[0]}×{g[1]} patches of "
                         f"{html.escape(sched['chosen']['split'])}, each with the halo it needs)")
        if step["in_float_island"]:
            parts.append(f"<span style='color:{theme.ON_LIGHT['bad']}'>float island: {step['float_bytes']:,} B "
                         "of fp32 tensors alive</span>")
        return "<br>".join(parts)

    def set_fit_model(self, model: Any) -> None:
        """Show the "Fit this board" row for `model` (app.memory.fit.FitModel) and draw its result."""
        from app.memory.fit_row import FitRow

        self.fit_model = model
        self.fit_row = FitRow(model, self._fit_board, self)
        self._lay.insertWidget(self._fit_at, self.fit_row)
        model.resultChanged.connect(lambda _s: self._recompute())
        model.finished.connect(lambda _s: self._fit_enabled())
        self._fit_enabled()

    def _fit_board(self) -> str:
        name = self.board.currentData()
        return "" if name in (None, CUSTOM) else str(name)

    def _fit_enabled(self) -> None:
        if self.fit_row is None:
            return
        why = ("pick a board above (custom sizes have no board to fit)" if not self._fit_board() else
               "lower a model first" if self.report is None else "")
        self.fit_row.set_board_ok(not why, why)

    # -- internals -------------------------------------------------------------------------------
    def _board_changed(self) -> None:
        custom = self.board.currentData() == CUSTOM
        for w in (self.ram, self.flash, self.apply):
            w.setVisible(custom)
        self.boardChanged.emit(self.board.currentData() or "")
        self._fit_enabled()
        if not custom:
            self._recompute()

    def _spec(self) -> Any:
        name = self.board.currentData()
        if not name:
            return None
        if name == CUSTOM:
            if not self.ram.text().strip():
                return None
            return custom_board(self.ram.text(), self.flash.text() or None)
        return board_named(name)

    def _recompute(self) -> None:
        rep = self.report
        if rep is None:
            self.bars.draw(None)
            self.timeline.draw(None)
            self.verdict_label.setText("")
            self.details.setHtml("")
            self.body.setCurrentWidget(self.placeholder)
            self.overlay.clear()
            self._fit_enabled()
            return
        try:
            spec = self._spec()
        except CmlensError as e:                   # a garbled custom size: say why, keep the old view
            self.verdict_label.setText(f"<span style='color:{theme.UI['bad']}'><b>{html.escape(e.message)}</b> "
                                       f"{html.escape(e.hint)}</span>")
            return
        if spec is not None:
            attach_board(rep, spec)
        else:
            rep["board"], rep["verdict"] = None, None
        ma = rep["method_allocator"]
        self.title.setText(
            f"<b>{html.escape(str(rep.get('model', '')))}</b> on {html.escape(rep.get('target', ''))}: "
            f"planned arena {', '.join(f'mem_id {i + 1}: {b:,} B' for i, b in enumerate(rep['planned_bytes']))}; "
            f"method allocator {ma['used']:,} B; .pte {rep['pte_bytes']:,} B "
            f"(constants {rep['constant_bytes']:,} B); peak at <b>{html.escape(str(rep['peak_op']))}</b>")
        self.verdict_label.setText(self._verdict_html(rep))
        self.bars.draw(rep)
        self.timeline.draw(rep)
        rows = [f"<b>largest tensor</b>: {t['bytes']:,} B {t['dtype']} {t['shape']} (ops #{t['first']}–#{t['last']}, "
                f"{html.escape(str(t['node'] or ''))})" for t in rep["largest_tensors"][:3]]
        rows += [f"<b>suggestion</b>: {html.escape(s)}" for s in rep.get("suggestions", [])]
        sched = self.fit_model.result if self.fit_model is not None else None
        self.overlay.draw(sched)
        if sched is not None:
            rows = details_rows(sched) + rows
        self._fit_enabled()
        self.details.setHtml("<br>".join(rows))
        self.body.setCurrentWidget(self.split)

    @staticmethod
    def _verdict_html(rep: dict[str, Any]) -> str:
        """One line: fits or not, and why; where each need goes follows (the tooltip has all of it)."""
        v = rep.get("verdict")
        if v is None:
            return "pick a board to check whether it fits"
        where = "; ".join(f"{html.escape(n['name'])} → {html.escape(n['region'] or 'nowhere')}" for n in v["needs"])
        if v["fits"]:
            ff = v["flash_free_bytes"]
            return (f"<span style='color:{theme.UI['ok']}'><b>fits {html.escape(rep['board']['name'])}</b></span>: "
                    f"{kib(v['ram_free_bytes'])} RAM free" + (f", {kib(ff)} flash free" if ff is not None else "")
                    + f" · {where}")
        return (f"<span style='color:{theme.UI['bad']}'><b>does not fit {html.escape(rep['board']['name'])}</b>: "
                + html.escape("; ".join(v["problems"])) + f"</span> · {where}")
