"""The Numerics tab: Run / Cancel, the inputs to use (N random or a folder), progress, the
"Colour graph by error" toggle and the NumericsView plots.

It runs `python -m backend_core.numerics.worker` through a WorkerClient (a separate process: the
GUI never imports torch, Cancel kills the process) and turns its JSON lines into signals. The main
window links it to the graph (selection both ways through provenance, heat overlay).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QSpinBox,
                               QToolButton, QVBoxLayout, QWidget)

from backend_core.numerics.results import PAIR_LABELS, NumericsResult

from .numerics_view import NumericsView, error_values, heat_range, numerics_worker_arguments
from .worker_client import WorkerClient
from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

DEFAULT_SAMPLES = 8


@dataclass(frozen=True)
class NumericsRequest:
    """What a numerics run compares: the same lowering options as the graph, plus inputs."""

    source: str
    target: str
    flow: str
    calib: str | None
    inputs: str                  # "N" random samples or a folder

    def lowering(self) -> tuple[str, str, str, str | None]:
        return self.source, self.target, self.flow, self.calib


class InputsPicker(QWidget):
    """N random samples, or a folder of .pt / .npy inputs (like the model bar's calibration)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder: str | None = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel("Inputs"))
        self.count = QSpinBox(self)
        self.count.setRange(1, 10000)
        self.count.setValue(DEFAULT_SAMPLES)
        self.count.setSuffix(" random")
        self.count.setToolTip("Number of random input samples (seeded, reproducible)")
        lay.addWidget(self.count)
        self.folder_btn = QToolButton(self)
        self.folder_btn.setText("Folder…")
        self.folder_btn.setCheckable(True)
        self.folder_btn.setToolTip("Use a folder of .pt / .npy inputs instead")
        self.folder_btn.clicked.connect(self._pick)
        lay.addWidget(self.folder_btn)

    def _pick(self) -> None:
        if not self.folder_btn.isChecked():
            self.set_folder(None)
            return
        d = QFileDialog.getExistingDirectory(self, "Numerics inputs (.pt / .npy)")
        self.set_folder(d or None)

    def set_folder(self, folder: str | None) -> None:
        self.folder = folder
        self.folder_btn.setChecked(bool(folder))
        self.count.setEnabled(not folder)
        self.folder_btn.setToolTip(f"Inputs from {folder} (click to go back to random inputs)" if folder
                                   else "Use a folder of .pt / .npy inputs instead")

    def value(self) -> str:
        return self.folder or str(self.count.value())


class NumericsPanel(QWidget):
    """Signals:
        nodeClicked(str): final-graph node id of a clicked point (select it in the graph).
        heatChanged(object): {node id: QColor} while "Colour graph by error" is on, else {}.
        progress(str, int, int): text, done, total (total 0: busy) while running.
        errorRaised(object): error dict for the error panel (stage, message, hint, traceback).
        finished(str): done | failed | cancelled | error.
        message(str): a short line for the status bar.
    """

    nodeClicked = Signal(str)
    heatChanged = Signal(object)
    progress = Signal(str, int, int)
    errorRaised = Signal(object)
    finished = Signal(str)
    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request: NumericsRequest | None = None        # the running or shown run
        self.status = "idle"
        self.seconds = 0.0
        self.error: dict[str, Any] | None = None
        self._t0 = 0.0
        self._got_done = False
        self._stderr_tail: list[str] = []
        self.worker = WorkerClient(self)
        self.worker.message.connect(self._on_message)
        self.worker.stderrLine.connect(self._on_stderr)
        self.worker.finished.connect(self._on_finished)
        self.worker.failedToStart.connect(self._on_failed_to_start)
        self._source_fn = None

        self.run_btn = QPushButton("Run numerics", self)
        self.run_btn.setToolTip("Run float, fake-quant and the lowered program on the inputs and "
                                "compare every layer (a separate process; the window stays usable)")
        self.run_btn.clicked.connect(self.run_current)
        self.inputs = InputsPicker(self)
        self.cancel_btn = QPushButton("Cancel", self)
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.setToolTip("Stop the numerics run now (kills its process)")
        self.cancel_btn.clicked.connect(self.cancel)
        self.bar = QProgressBar(self)
        self.bar.setMaximumWidth(160)
        self.bar.setTextVisible(False)
        self.bar.hide()
        self.state_label = QLabel("", self)
        self.act_heat = QAction("Colour graph by error", self)
        self.act_heat.setCheckable(True)
        self.act_heat.setEnabled(False)
        self.act_heat.setToolTip("Heat overlay on the graph: node fill by SQNR of the metric chosen "
                                 "under 'heat' (bright = more error); other stages through provenance")
        self.act_heat.toggled.connect(lambda _on: self._emit_heat())
        self.heat_btn = QToolButton(self)
        self.heat_btn.setDefaultAction(self.act_heat)
        self.heat_btn.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)

        self.view = NumericsView(self)
        self.view.nodeClicked.connect(self.nodeClicked)
        self.view.heatChanged.connect(lambda _c: self._emit_heat())

        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 0)
        top.addWidget(self.run_btn)
        top.addWidget(self.inputs)
        top.addWidget(self.cancel_btn)
        top.addWidget(self.bar)
        top.addWidget(self.state_label, 1)
        top.addWidget(self.heat_btn)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.view, 1)

    # ------------------------------------------------------------------ control
    def set_request_source(self, fn) -> None:
        """`fn() -> (source, target, flow, calib) | None`: the lowering the graph shows."""
        self._source_fn = fn

    def run_current(self) -> None:
        cur = self._source_fn() if self._source_fn else None
        if not cur or not cur[0]:
            self.message.emit("Numerics: choose a model first")
            return
        self.run(NumericsRequest(*cur, inputs=self.inputs.value()))

    def run(self, request: NumericsRequest) -> None:
        """Start a numerics run (cancels a running one)."""
        self.worker.cancel()
        self.request = request
        self.status = "running"
        self.error = None
        self._got_done = False
        self._stderr_tail = []
        self._t0 = time.perf_counter()
        self._set_busy(True)
        self._progress("starting the numerics worker…", 0, 0)
        self.worker.start(numerics_worker_arguments(request.source, request.target, request.flow,
                                                    inputs=request.inputs, calib=request.calib))

    def cancel(self) -> None:
        if self.status != "running":
            return
        self.worker.cancel()
        self.status = "cancelled"
        self._set_busy(False)
        self.state_label.setText("cancelled")
        self.message.emit("Numerics cancelled")
        self.finished.emit("cancelled")

    def is_running(self) -> bool:
        return self.status == "running"

    def shutdown(self) -> None:
        self.worker.cancel()

    def clear(self) -> None:
        """Forget the result (the graph now shows another lowering: node ids would not match)."""
        if self.is_running():
            self.cancel()
        self.request = None
        self.view.set_result(None)
        self.act_heat.setChecked(False)
        self.act_heat.setEnabled(False)
        self.state_label.setText("")

    def result(self) -> NumericsResult | None:
        return self.view.result()

    def heat_info(self) -> tuple[float, float, str]:
        """(worst dB, best dB, label) of the heat overlay, as the colour bar shows it."""
        res = self.view.result()
        pair = self.view.heat_metric.currentData()
        lo, hi = heat_range(error_values(res, pair)) if res is not None else (0.0, 60.0)
        return lo, hi, PAIR_LABELS.get(pair, str(pair))

    # ------------------------------------------------------------------ internals
    def _emit_heat(self) -> None:
        on = self.act_heat.isChecked() and self.view.result() is not None
        self.heatChanged.emit(self.view.heat_colors() if on else {})

    def _set_busy(self, busy: bool) -> None:
        self.run_btn.setEnabled(not busy)
        self.cancel_btn.setEnabled(busy)
        self.bar.setVisible(busy)
        if not busy:
            self.progress.emit("", -1, -1)            # hides the status-bar indicator

    def _progress(self, text: str, done: int, total: int) -> None:
        self.bar.setRange(0, max(total, 0))
        if total > 0:
            self.bar.setValue(done)
        self.state_label.setText(text)
        self.progress.emit(text, done, total)

    def _on_message(self, msg: dict) -> None:
        t = msg.get("type")
        if t == "status":
            self._progress(str(msg.get("text", "")), 0, 0)
        elif t == "progress":
            phase = msg.get("phase", "")
            done, total = int(msg.get("done") or 0), int(msg.get("total") or 0)
            text = str(msg.get("text", ""))
            if phase == "analysis" and not text.startswith("analysis"):
                text = f"comparing: {text}"
            self._progress(f"{text} ({done}/{total})", done, total)
        elif t == "result":
            self.view.set_result(msg.get("result"))
            self.act_heat.setEnabled(True)
            self._emit_heat()
        elif t == "error":
            self.error = {"stage": "numerics", "title": "Numerics failed", "node": None,
                          "message": str(msg.get("message", "")), "hint": str(msg.get("hint") or ""),
                          "traceback": str(msg.get("detail") or ""),
                          "note": "The graph and earlier results stay usable."}
            self.errorRaised.emit(self.error)
        elif t == "done":
            self._got_done = True
            self.seconds = float(msg.get("seconds") or time.perf_counter() - self._t0)
            self.status = "done" if msg.get("status") == "done" and self.view.result() is not None else "failed"

    def _on_stderr(self, line: str) -> None:
        if line.strip():
            self._stderr_tail = (self._stderr_tail + [line])[-40:]

    def _on_finished(self, code: int, cancelled: bool) -> None:
        if cancelled or self.status == "cancelled":
            return
        if not self._got_done:
            self.status = "error"
            self.error = {"stage": "numerics", "title": "Numerics failed", "node": None,
                          "message": f"The numerics worker exited with code {code} without a result.",
                          "hint": "Its last log lines are under Traceback.",
                          "traceback": "\n".join(self._stderr_tail),
                          "note": "The graph and earlier results stay usable."}
            self.errorRaised.emit(self.error)
        self._set_busy(False)
        res = self.view.result()
        if self.status == "done" and res is not None:
            text = (f"{len(res.layers)} layers, {res.n_inputs} sample(s) in {self.seconds:.1f} s")
            self.state_label.setText(text)
            self.message.emit(f"Numerics done: {text}")
        else:
            self.state_label.setText("failed (see the error panel)")
            self.message.emit("Numerics failed (see the error panel)")
        self.finished.emit(self.status)

    def _on_failed_to_start(self, message: str) -> None:
        self.status = "error"
        self.error = {"stage": "numerics", "title": "Numerics failed", "node": None,
                      "message": message.replace("lowering worker", "numerics worker"),
                      "hint": "Check the Python environment (make setup).", "traceback": ""}
        self._set_busy(False)
        self.errorRaised.emit(self.error)
        self.finished.emit(self.status)
