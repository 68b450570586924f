"""The "Run on target" panel: build -> run -> results for the model shown in the main window.

Self-contained (the main window only calls the public API below). It wires four pieces and holds only
which action runs:
- the form (form.py): what to run and how, as a `RunOptions`;
- a target run is a `Job` (target_job.py: the window's lowering + the form) run in the job worker
  process (app.runtime.qt_job.QtJob): its `run_step` events move the progress bar, its `line`
  events stream into the console, its `job_result` (the run step's `ModelRunResult.to_dict()`, or the
  error with its step) fills the result views;
- the self-test and the doctor (tool_runs.py), which run no model. Missing tools or no ExecuTorch
  checkout show the doctor's findings with the exact install commands instead of a traceback;
- the result side (results.py: outcome line, progress, result tabs, console).

Public API: `TargetPanel(parent)`, `set_model_source(source, target, flow, calib, channels_last, keep_going)`,
`show_recorded(...)`, `show_job_result(job_result)`, `add_result_tab`, `show_result_tab`, signals
`nodeClicked(str)` (a final-graph node id from the gap plot), `runFinished(object)`, `finished(str, int)`,
`shutdown()` (stop what runs)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QWidget

from backend_core.common.cpus import TARGETS
from backend_core.orchestration.jobs.spec import Job

from app.firmware.form import TargetForm
from app.firmware.results import TargetResults
from app.firmware.target_job import target_job
from app.firmware.tool_runs import ToolRuns
from app.runtime.qt_job import QtJob

# From these steps on, the job worker has children (cmake and its compilers, the simulator): Cancel lets
# it stop them (SIGTERM). Before (lowering, op check) nothing could be orphaned: it is killed at once.
STEPS_WITH_CHILDREN = ("libraries", "build runner", "run", "gaps", "results")
NO_CHECKOUT = ("No ExecuTorch checkout set: the runner is built from its sources. Clone one "
               "(command below), set its path above, then press Run again.")


class TargetPanel(QWidget):
    """Signals:
        nodeClicked(str): final-graph node id of a clicked gap point.
        runFinished(object): the run's result dict (ModelRunResult.to_dict(): the job's `steps["run"]`), or
            an ETDump overlay: other features (the profile view) show their part of it; the shell connects them.
        finished(str, int): (mode, exit status) when a run, self-test or doctor ends (-1: cancelled).
    """

    nodeClicked = Signal(str)
    runFinished = Signal(object)
    finished = Signal(str, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lowering: Job | None = None      # the window's lowering Job (session.lowering_job)
        self._headline = ""
        self._has_children = False                       # the running job reached a build or the simulator
        self.last_result: dict[str, Any] | None = None   # the run section (or {"error", "exit_code"})
        self.last_job_result: dict[str, Any] | None = None
        self.last_exit: int | None = None
        self.form = TargetForm()
        self.results = TargetResults()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(8)
        lay.addWidget(self.form)
        lay.addWidget(self.results, 1)
        f, r = self.form, self.results   # their widgets, by the names the window, the scripts and the tests use
        self.sim, self.cpu, self.timeout, self.et_root, self.cmsis = f.sim, f.cpu, f.timeout, f.et_root, f.cmsis
        self.etdump, self.profile, self.model_label = f.etdump, f.profile, f.model_label
        self.run_btn, self.selftest_btn, self.doctor_btn, self.cancel_btn = (f.run_btn, f.selftest_btn,
                                                                             f.doctor_btn, f.cancel_btn)
        self.result_view, self.doctor_view, self.gap_plot = r.result_view, r.doctor_view, r.gap_plot
        self.console, self.tabs, self.progress = r.console, r.tabs, r.progress
        f.run_btn.clicked.connect(lambda: self.run())
        f.selftest_btn.clicked.connect(lambda: self.selftest())
        f.doctor_btn.clicked.connect(lambda: self.doctor())
        f.cancel_btn.clicked.connect(self.cancel)
        r.nodeClicked.connect(self.nodeClicked)
        r.shown.connect(self.runFinished)
        self.job_slot = QtJob("job worker", "run", self)
        self.job_slot.event.connect(self._on_job_event)
        self.job_slot.finished.connect(self._on_job_finished)
        self.tools = ToolRuns(self)
        self.tools.line.connect(r.on_line)
        self.tools.step.connect(r.advance)
        self.tools.finished.connect(self._on_tool_finished)

    @property
    def source(self) -> str:
        return self.lowering.model if self.lowering is not None else ""

    @property
    def flow(self) -> str:
        return self.lowering.lower.flow if self.lowering is not None else "legacy"

    @property
    def mode(self) -> str:
        """run | selftest | doctor while one runs, else ""."""
        return self.results.mode

    # -- public API ------------------------------------------------------------------------------
    def set_lowering(self, lowering: Job) -> None:
        """The lowering the main window shows (session.lowering_job), kept going included: a run lowers the
        same way, so it runs that program and the node ids of its gaps are the graph's."""
        self.lowering = lowering
        req = lowering.lower
        if req.target in TARGETS:
            self.form.cpu.setCurrentText(req.target)
        extra = ", channels-last" if req.channels_last else ""
        self.form.model_label.setText(f"model: <b>{lowering.model or '—'}</b> ({req.flow} flow{extra})")
        self.form.run_btn.setEnabled(bool(lowering.model) and not self.is_busy())

    def show_recorded(self, overlay: dict[str, Any], name: str, notes: list[str] | None = None) -> None:
        """An ETDump recorded elsewhere (the user's board, the FVP; opened as an artefact): its per-layer
        gaps in the same plot as a run's, its per-op rows and notes in the result view."""
        self.results.show_recorded(overlay, name, notes)

    def add_result_tab(self, widget: QWidget, title: str) -> None:
        """Another feature's view of a run's result (the shell adds the profile view here)."""
        self.results.add_result_tab(widget, title)

    def show_result_tab(self, widget: QWidget) -> None:
        self.results.tabs.setCurrentWidget(widget)

    def shutdown(self) -> None:
        """Window closing: stop the job worker (its build or simulator with it) and the tool thread."""
        self.job_slot.shutdown(graceful=self._has_children)
        self.tools.shutdown()

    def is_busy(self) -> bool:
        """Something runs, or a cancelled job worker has not exited yet."""
        return self.job_slot.is_running() or self.job_slot.has_processes() or self.tools.is_running()

    # -- actions -----------------------------------------------------------------------------------
    def run(self) -> None:
        """The current model as a Job (lower as the window does, build, run, profile when asked) in the
        job worker; without a checkout, the doctor explains what is missing."""
        self.form.save_settings()
        if self.is_busy() or self.lowering is None or not self.lowering.model:
            return
        if not self.form.et_root_path():
            self.doctor(NO_CHECKOUT)
            return
        req = replace(self.lowering.lower, target=self.form.cpu.currentText())
        job = target_job(replace(self.lowering, lower=req), self.form.run_options(), self.form.profile.isChecked())
        self._has_children = False
        self._begin("run", f"Job {', '.join(job.steps)} of {job.model} for {req.target} "
                           f"({req.flow} flow) on {job.run.sim} in the job worker")
        self.job_slot.start(job)

    def selftest(self, variant: str = "selftest") -> None:
        """The self-test firmware: proves toolchain + simulator work without any ExecuTorch."""
        self.form.save_settings()
        if self.is_busy():
            return
        cpu, sim = self.form.cpu.currentText(), self.form.sim.currentText()
        self._begin("selftest", f"self-test '{variant}' for {cpu} on {sim}")
        self.tools.selftest(cpu, sim, self.form.timeout.value(), variant)

    def doctor(self, headline: str = "") -> None:
        if self.tools.is_running() or self.job_slot.is_running():
            return
        self._headline = headline
        self._begin("doctor", "doctor: checking the toolchain, the simulators and the checkout")
        self.tools.doctor(self.form.et_root_path(), self.form.cmsis_path())

    def cancel(self) -> None:
        """Stop the run (the job worker ends its build or simulator, then exits) or the self-test."""
        if self.job_slot.is_running() or self.tools.is_running():
            self.results.append("cmlens", f"cancel: stopping the {self.mode or 'run'} (its build or simulator with it)")
            if not self.job_slot.cancel(graceful=self._has_children):
                self.tools.cancel()

    def _begin(self, mode: str, headline: str) -> None:
        self.results.begin(mode, headline)
        self.form.set_busy(True, bool(self.source))

    def _end(self, text: str) -> str:
        self.form.set_busy(False, bool(self.source))
        return self.results.end(text)

    # -- results -----------------------------------------------------------------------------------
    def _on_job_event(self, kind: str, data: dict[str, Any]) -> None:
        """run_step: the progress bar; line: the console; status and step: a note in the console."""
        if kind == "run_step":
            self._has_children = self._has_children or data.get("name") in STEPS_WITH_CHILDREN
            self.results.advance(str(data.get("name", "")))
        elif kind == "line":
            self.results.on_line(str(data.get("stream", "stdout")), str(data.get("line", "")))
        elif kind == "status":
            self.results.append("cmlens", str(data.get("text", "")))
        elif kind == "step":
            self.results.append("cmlens", f"step {data.get('name', '')}")

    def _on_job_finished(self, status: str, job_result: dict[str, Any] | None) -> None:
        if status == "cancelled":
            self._cancelled(self._end("cancelled"))
            return
        code = int((job_result or {}).get("exit_code", 3))
        mode = self._end(f"finished, exit status {code}")
        self.show_job_result(job_result)
        self.finished.emit(mode, code)

    def show_job_result(self, job_result: dict[str, Any] | None) -> None:
        """A target Job's result (JobResult.to_dict()): the run section, or the error and which step gave it."""
        self.last_job_result = job_result
        res = job_result or {}
        code = self.last_exit = int(res.get("exit_code", 3))
        self.results.append("cmlens", f"job {res.get('status', 'failed')}, exit status {code}")
        run = (res.get("steps") or {}).get("run")
        err = res.get("error")
        if err or not run:
            err = err or {"message": "the job worker ended without a result (see the console)"}
            self.last_result = {"error": err, "exit_code": code}
            self.results.show_error(code, err)
            if code == 2:        # bad input or missing tool: the doctor says what to install
                self.doctor(f"Run on target, exit 2: {err.get('message', '')}")
            return
        self.last_result = {**run, "timings_s": {**res.get("timings_s", {}), **(run.get("timings_s") or {})}}
        self.results.show_run(self.last_result, code)

    def _cancelled(self, mode: str) -> None:
        self.last_exit = -1
        self.results.show_cancelled()
        self.finished.emit(mode, -1)

    def _on_tool_finished(self, kind: str, outcome: dict[str, Any]) -> None:
        if outcome.get("cancelled"):
            self._cancelled(self._end("cancelled"))
            return
        code = int(outcome.get("exit_code", 3))
        mode = self._end("done" if kind == "doctor" else f"finished, exit status {code}")
        if kind == "doctor":
            self.results.show_doctor(outcome.get("result"), self._headline)
            self.finished.emit(mode, code)
            return
        self.last_exit = code
        self.results.append("cmlens", f"exit status {code}")
        err = outcome.get("error")
        if err:
            self.last_result = {"error": err, "exit_code": code}
            self.results.show_error(code, err)
            self.finished.emit(mode, code)
            if code == 2:
                self.doctor(f"self-test exit 2: {err.get('message', '')}")
            return
        self.last_result = outcome["result"]
        self.results.show_run(self.last_result, code)
        self.finished.emit(mode, code)
