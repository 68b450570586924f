"""The Numerics tab: Run / Cancel, the inputs to use (N random or a folder), progress, the
"Colour graph by error" toggle and the NumericsView plots.

It submits the Job `cmlens numerics` runs (steps lower + numerics) through the window's adapter over the
worker-process executor (app.runtime.qt_job.QtJob: a separate process, the GUI never imports torch, Cancel
kills the process) and turns its events into signals. The main
window links it to the graph (selection both ways through provenance, heat overlay).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QToolButton, QVBoxLayout, QWidget

from backend_core.orchestration.jobs.spec import Job, NumericsOptions
from backend_core.analyses.numerics.results import PAIR_LABELS, NumericsResult

from app.numerics.view import NumericsView, error_values, heat_range
from app.runtime.qt_job import QtJob
from app.widgets.samples_picker import SamplesPicker

DEFAULT_SAMPLES = 8


def numerics_job(lowering: Job, inputs: str) -> Job:
    """The Job `cmlens numerics SOURCE --inputs ...` runs, lowered as the graph was (same options, kept going
    included: same node ids)."""
    return replace(lowering, steps=("lower", "numerics"), numerics=NumericsOptions(inputs=inputs))


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
        self.shown_job: Job | None = None        # the running or shown numerics Job
        self.job = QtJob("numerics worker", "numerics", self, cancel_grace_ms=0)
        self.job.event.connect(self._on_event)
        self.job.finished.connect(self._on_finished)
        self._source_fn = None

        self.run_btn = QPushButton("Run numerics", self)
        self.run_btn.setToolTip("Run float, fake-quant and the lowered program on the inputs and "
                                "compare every layer (a separate process; the window stays usable)")
        self.run_btn.clicked.connect(self.run_current)
        self.inputs = SamplesPicker("Inputs", "Compare", default=DEFAULT_SAMPLES, minimum=1, parent=self)
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
        """`fn() -> Job | None` (app.lowering.session.lowering_job): the lowering the graph shows."""
        self._source_fn = fn

    def run_current(self) -> None:
        cur = self._source_fn() if self._source_fn else None
        if cur is None or not cur.model:
            self.message.emit("Numerics: choose a model first")
            return
        self.run(numerics_job(cur, self.inputs.value()))

    def run(self, job: Job) -> None:
        """Start a numerics run (cancels a running one): `numerics_job(lowering, inputs)`."""
        self.job.shutdown(graceful=False)
        self.shown_job = job
        self._set_busy(True)
        self._progress("starting the numerics worker…", 0, 0)
        self.job.start(job)

    def cancel(self) -> None:
        if self.job.cancel(graceful=False):  # -> finished("cancelled")
            self._set_busy(False)
            self.state_label.setText("cancelled")
            self.message.emit("Numerics cancelled")

    @property
    def status(self) -> str:
        return self.job.status

    @property
    def error(self) -> dict[str, Any] | None:
        return self.job.error

    @property
    def seconds(self) -> float:
        return self.job.seconds

    @property
    def worker(self) -> QtJob:
        """The job's adapter (tests check its process)."""
        return self.job

    def is_running(self) -> bool:
        return self.job.is_running()

    def shutdown(self) -> None:
        self.job.shutdown(graceful=False)

    def clear(self) -> None:
        """Forget the result (the graph now shows another lowering: node ids would not match)."""
        if self.is_running():
            self.cancel()
        self.shown_job = None
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

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "status":
            self._progress(str(data.get("text", "")), 0, 0)
        elif kind == "stage":                       # the lowering's stages: the first part of the bar
            planned = data.get("planned") or []
            snap = data["snapshot"]
            self._progress(f"lowering: {snap.stage} ({snap.index + 1}/{len(planned)})", snap.index + 1, len(planned))
        elif kind == "progress":
            done, total = int(data.get("done") or 0), int(data.get("total") or 0)
            text = str(data.get("text", ""))
            if data.get("phase") == "analysis" and not text.startswith("analysis"):
                text = f"comparing: {text}"
            self._progress(f"{text} ({done}/{total})", done, total)

    def _on_finished(self, status: str, row: dict | None = None) -> None:
        if status == "cancelled":
            self.finished.emit(status)
            return
        numerics = ((row or {}).get("steps") or {}).get("numerics")
        if status == "done" and numerics is not None:
            self.view.set_result(numerics)
            self.act_heat.setEnabled(True)
            self._emit_heat()
        else:
            err = (row or {}).get("error") or {}
            if status == "done":
                status = self.job.status = "failed"        # `done` without a result is no success
            self.errorRaised.emit({"stage": err.get("stage") or "numerics", "node": err.get("node"),
                                   "message": err.get("message") or "the numerics run gave no result",
                                   "hint": err.get("hint", ""), "traceback": err.get("detail", ""),
                                   "title": "Numerics failed", "note": "The graph and earlier results stay usable."})
        self._set_busy(False)
        res = self.view.result()
        if status == "done" and res is not None:
            text = (f"{len(res.layers)} layers, {res.n_inputs} sample(s) in {self.seconds:.1f} s")
            self.state_label.setText(text)
            self.message.emit(f"Numerics done: {text}")
        else:
            self.state_label.setText("failed (see the error panel)")
            self.message.emit("Numerics failed (see the error panel)")
        self.finished.emit(status)
