"""MemoryPanel: the lowered model's memory against a board.

Public API (the shell wires it; this package imports no other feature package):
- `MemoryPanel(parent)`; `set_lowering_result(data)` with the lowering worker's `done` message (its
  `memory` key, present when the worker ran with `--memory`), a report dict with `memory`, or the
  `memory` dict itself (None: clear);
- `set_board(name)`: pick a board (names of backend_core.memory.all_boards(); "" for none);
- signal `nodeClicked(str)`: the final-graph node id of the op clicked in the timeline;
- signal `boardChanged(str)`: the board picked;
- `node_html(node_id)`: a node's output bytes, where they live (memory id, offset), scratch, constants,
  live bytes at that op, for the inspector;
- `verdict()`: the current verdict dict (or None);
- `bytes_by_node(what)`: {node id: bytes} ("live_bytes", "scratch_bytes", "constant_bytes") to colour the graph.
The verdict for another board is recomputed here (backend_core.memory.attach_board is plain Python);
nothing here imports torch or ExecuTorch."""
from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from backend_core.errors import CmlensError
from backend_core.memory import all_boards, attach_board, board_named, custom_board
from backend_core.memory.verdict import kib

from app.memory.bars import KIND_COLORS, StackedBars
from app.memory.timeline import TimelinePlot
from app.widgets import theme

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


class MemoryPanel(QWidget):
    nodeClicked = Signal(str)
    boardChanged = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import pyqtgraph as pg

        self.report: dict[str, Any] | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.title = QLabel("no memory report yet: lower a model (the worker runs with --memory)")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        row = QHBoxLayout()
        self.board = QComboBox()
        self.board.addItem(NO_BOARD, "")
        for name, b in all_boards().items():
            self.board.addItem(f"{name}  ({b.core}, {kib(b.ram_bytes)} RAM)", name)
        self.board.addItem(CUSTOM, CUSTOM)
        self.board.setToolTip("Check the model against a board: QEMU/FVP boards (kernels/boards.json) and MCUs "
                              "(resources/boards/mcus.json, each row cites its datasheet)")
        self.ram = QLineEdit()
        self.ram.setPlaceholderText("RAM e.g. 256K")
        self.flash = QLineEdit()
        self.flash.setPlaceholderText("flash e.g. 1M")
        self.apply = QPushButton("check")
        for w in (self.ram, self.flash, self.apply):
            w.setVisible(False)
        self.board.currentIndexChanged.connect(self._board_changed)
        self.apply.clicked.connect(self._recompute)
        self.ram.returnPressed.connect(self._recompute)
        self.flash.returnPressed.connect(self._recompute)
        row.addWidget(QLabel("board"))
        row.addWidget(self.board, 1)
        row.addWidget(self.ram)
        row.addWidget(self.flash)
        row.addWidget(self.apply)
        self.verdict_label = QLabel("")
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        self.bars_plot = pg.PlotWidget(background="w")
        self.bars_plot.setMaximumHeight(150)
        self.bars_plot.setMinimumHeight(110)
        bp = self.bars_plot.getPlotItem()
        bp.setMenuEnabled(False)
        bp.getViewBox().setMouseEnabled(x=True, y=False)
        bp.getAxis("left").setTicks([[(1, "RAM"), (0, "flash")]])
        bp.getAxis("left").setWidth(120)
        bp.setLabel("bottom", "KiB")
        self.bars = StackedBars(bp)
        self.legend = QLabel("")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.timeline_plot = pg.PlotWidget(background="w")
        self.timeline_plot.setMinimumHeight(180)
        self.timeline = TimelinePlot(self.timeline_plot)
        self.timeline.nodeClicked.connect(self.nodeClicked)
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setStyleSheet(theme.MUTED_STYLE)
        lay.addWidget(self.title)
        lay.addLayout(row)
        lay.addWidget(self.verdict_label)
        lay.addWidget(self.bars_plot)
        lay.addWidget(self.legend)
        lay.addWidget(self.timeline_plot, 1)
        lay.addWidget(self.details)

    # -- public API ------------------------------------------------------------------------------
    def set_lowering_result(self, data: Any) -> None:
        """Show the memory report carried by a done message / report / memory dict (None: clear)."""
        self.report = memory_of(data)
        if self.report is None:
            err = data.get("memory", {}).get("error") if isinstance(data, dict) and isinstance(data.get("memory"), dict) else None
            self.title.setText("no memory report" + (f": {html.escape(err)}" if err else
                               " for this lowering (it failed, or the worker ran without --memory)"))
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
        if step["in_float_island"]:
            parts.append(f"<span style='color:#c62828'>float island: {step['float_bytes']:,} B of fp32 tensors alive</span>")
        return "<br>".join(parts)

    # -- internals -------------------------------------------------------------------------------
    def _board_changed(self) -> None:
        custom = self.board.currentData() == CUSTOM
        for w in (self.ram, self.flash, self.apply):
            w.setVisible(custom)
        self.boardChanged.emit(self.board.currentData() or "")
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
            self.legend.setText("")
            self.details.setText("")
            return
        try:
            spec = self._spec()
        except CmlensError as e:                   # a garbled custom size: say why, keep the old view
            self.verdict_label.setText(f"<span style='color:#c62828'><b>{html.escape(e.message)}</b> "
                                       f"{html.escape(e.hint)}</span>")
            return
        if rep.get("runtime") is None and rep.get("operators") is not None:
            # the runtime around the model from the shipped table (plain Python); the CLI and the jobs
            # measure it from this machine's libraries when they exist
            from backend_core.memory.runtime import from_table, portable_ops

            rt = from_table(rep.get("target", ""), portable_ops(rep["operators"]))
            rep["runtime"] = rt.to_dict() if rt is not None else None
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
        segs = self.bars.draw(rep)
        self.legend.setText(" &nbsp; ".join(
            f"<span style='color:{KIND_COLORS.get(k, '#9e9e9e')}'>■</span> {html.escape(k)} {kib(b)}"
            for row in ("RAM", "flash") for k, b in segs.get(row, [])) + " &nbsp; <span style='color:#90a4ae'>■</span> board (drawn up to 4× the need)")
        self.timeline.draw(rep)
        rows = [f"largest tensor: {t['bytes']:,} B {t['dtype']} {t['shape']} (ops #{t['first']}–#{t['last']}, "
                f"{html.escape(str(t['node'] or ''))})" for t in rep["largest_tensors"][:3]]
        rows += [f"suggestion: {html.escape(s)}" for s in rep.get("suggestions", [])]
        self.details.setText("<br>".join(rows))

    @staticmethod
    def _verdict_html(rep: dict[str, Any]) -> str:
        v = rep.get("verdict")
        if v is None:
            return "pick a board to check whether it fits"
        where = "; ".join(f"{html.escape(n['name'])} → {html.escape(n['region'] or 'nowhere')}" for n in v["needs"])
        if v["fits"]:
            ff = v["flash_free_bytes"]
            return (f"<span style='color:#2e7d32'><b>fits {html.escape(rep['board']['name'])}</b></span>: "
                    f"{kib(v['ram_free_bytes'])} RAM free" + (f", {kib(ff)} flash free" if ff is not None else "")
                    + f"<br><small>{where}</small>")
        return (f"<span style='color:#c62828'><b>does not fit {html.escape(rep['board']['name'])}</b>: "
                + html.escape("; ".join(v["problems"])) + f"</span><br><small>{where}</small>")
