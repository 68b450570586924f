"""The "Run on target" panel: build -> run -> results for the model shown in the main window.

Self-contained (the main window only calls the public API below). The panel composes three pieces and
holds only what is on screen:
- the form (form.py): what to run and how, as a `RunOptions`;
- a target run is a `Job` run in the job worker process (target_job.py): its `run_step` events move the
  progress bar, its `line` events stream into an append-only console, and its `job_result` (the run
  step's `ModelRunResult.to_dict()`, or the error with its step) fills the result views (views.py);
- the self-test and the doctor (tool_runs.py), which run no model. Missing tools or no ExecuTorch
  checkout show the doctor's findings with the exact install commands instead of a traceback.

Public API: `TargetPanel(parent)`, `set_model_source(source, target, flow, calib, channels_last)`,
`show_recorded(...)`, `show_job_result(job_result)`, signals `nodeClicked(str)` (a final-graph node id
from the gap plot), `runFinished(object)`, `finished(str, int)`, `shutdown()` (stop what runs)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QProgressBar, QTabWidget, QVBoxLayout, QWidget

from backend_core import protocol
from backend_core.cpus import DEFAULT_TARGET, TARGETS
from backend_core.firmware.uart import abbreviate_line

from app.firmware.form import TargetForm
from app.firmware.target_job import LoweringChoice, target_job
from app.firmware.tool_runs import ToolRuns
from app.firmware.views import (OUTCOME_COLORS, DoctorView, GapPlot, ResultView, recorded_run_html,
                                recorded_run_summary)
from app.runtime.job_runner import JobRunner

CONSOLE_MAX_LINES = 5000
STEP_NAMES = protocol.RUN_STEPS          # the run's `run_step` events drive the progress bar
NO_CHECKOUT = ("No ExecuTorch checkout set: the runner is built from its sources. Clone one "
               "(command below), set its path above, then press Run again.")


def console_line(stream: str, text: str) -> str:
    """How a streamed line reads in the console (as `cmlens run` prints it): UART lines, the run's own
    notes, build output, errors. A raw ETDump base64 line (100+ kB) is abbreviated: the results come
    from the job's JSON, not from the console."""
    text = abbreviate_line(text)
    if stream == "uart":
        return f"uart> {text}"
    if stream in ("cmlens", "progress", "cmlens-gui"):
        return f"cmlens: {text}"
    if stream == "stderr":
        return f"! {text}"
    return f"  | {text}"


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
        self.lowering = LoweringChoice()
        self.mode = ""                                   # "run" | "selftest" | "doctor" while busy
        self._headline = ""
        self.last_result: dict[str, Any] | None = None   # the run section (or {"error", "exit_code"})
        self.last_job_result: dict[str, Any] | None = None
        self.last_exit: int | None = None
        self.runner = JobRunner("job worker", "run", self)
        self.runner.event.connect(self._on_job_event)
        self.runner.finished.connect(self._on_job_finished)
        self.tools = ToolRuns(self)
        self.tools.line.connect(self._on_line)
        self.tools.step.connect(self._advance)
        self.tools.finished.connect(self._on_tool_finished)
        self._build_ui()

    @property
    def source(self) -> str:
        return self.lowering.source

    @property
    def flow(self) -> str:
        return self.lowering.flow

    # -- public API ------------------------------------------------------------------------------
    def set_model_source(self, source: str, target: str, flow: str, calib: str | int | None = None,
                         channels_last: bool = False) -> None:
        """The model the main window shows, lowered as the window lowers it: a run uses the same
        options, so the node ids of its gaps are the graph's."""
        self.lowering = LoweringChoice(source, target if target in TARGETS else DEFAULT_TARGET, flow, calib,
                                       channels_last)
        if target in TARGETS:
            self.form.cpu.setCurrentText(target)
        extra = ", channels-last" if channels_last else ""
        self.form.model_label.setText(f"model: <b>{source or '—'}</b> ({flow} flow{extra})")
        self.form.run_btn.setEnabled(bool(source) and not self.is_busy())

    def show_recorded(self, overlay: dict[str, Any], name: str, notes: list[str] | None = None) -> None:
        """An ETDump recorded elsewhere (the user's board, the FVP; opened as an artefact): its per-layer
        gaps in the same plot as a run's, its per-op rows and notes in the result view."""
        gaps = overlay.get("gaps")
        self.result_view.show_recorded(recorded_run_summary(overlay, name))
        self.result_view.details.setHtml(recorded_run_html(overlay, name, notes))
        self.gap_plot.set_gaps(gaps)
        self._mark_gaps_tab(gaps)
        self.tabs.setCurrentWidget(self.gap_plot)
        self.runFinished.emit(overlay)

    def add_result_tab(self, widget: QWidget, title: str) -> None:
        """Another feature's view of a run's result (the shell adds the profile view here), before the
        Doctor and Console tabs."""
        self.tabs.insertTab(self.tabs.indexOf(self.doctor_view), widget, title)

    def show_result_tab(self, widget: QWidget) -> None:
        self.tabs.setCurrentWidget(widget)

    def shutdown(self) -> None:
        """Window closing: stop the job worker (its build or simulator with it) and the tool thread."""
        self.runner.shutdown()
        self.tools.shutdown()

    def is_busy(self) -> bool:
        """Something runs, or a cancelled job worker has not exited yet."""
        return self.runner.is_running() or self.runner.has_processes() or self.tools.is_running()

    # -- UI ----------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        """Left: the form; right: the outcome line with the progress, and the result tabs (details,
        per-layer gaps, profile, doctor, console). It fits a 1366x768 laptop's Details dock without
        scrolling."""
        self.form = TargetForm()
        f = self.form           # its controls, by the names the window, the scripts and the tests use
        self.sim, self.cpu, self.timeout, self.et_root, self.cmsis = f.sim, f.cpu, f.timeout, f.et_root, f.cmsis
        self.etdump, self.profile, self.model_label = f.etdump, f.profile, f.model_label
        self.run_btn, self.selftest_btn, self.doctor_btn, self.cancel_btn = (f.run_btn, f.selftest_btn,
                                                                             f.doctor_btn, f.cancel_btn)
        self.form.run_btn.clicked.connect(lambda: self.run())
        self.form.selftest_btn.clicked.connect(lambda: self.selftest())
        self.form.doctor_btn.clicked.connect(lambda: self.doctor())
        self.form.cancel_btn.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setRange(0, len(STEP_NAMES))
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        self.progress.setMaximumWidth(240)
        self.progress.hide()
        self.console = QPlainTextEdit()
        self.console.setReadOnly(True)
        self.console.setMaximumBlockCount(CONSOLE_MAX_LINES)
        self.console.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.console.setPlaceholderText("The build's and the simulator's output stream here.")
        from app.widgets.theme import mono_font
        self.console.setFont(mono_font(8.5))
        self.result_view = ResultView()
        self.doctor_view = DoctorView()
        self.doctor_view.setPlaceholderText("Press Doctor to check the toolchain, the simulators and the "
                                            "ExecuTorch checkout (each missing piece with its install command).")
        self.gap_plot = GapPlot()
        self.gap_plot.nodeClicked.connect(self.nodeClicked)
        self.tabs = QTabWidget()                  # the outcome line stays visible above every tab
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.result_view.details, "Result")
        self.tabs.addTab(self.gap_plot, "Per-layer gaps")
        self.tabs.addTab(self.doctor_view, "Doctor")
        self.tabs.addTab(self.console, "Console")
        line = QHBoxLayout()
        line.setSpacing(6)
        line.addWidget(self.result_view, 1)
        line.addWidget(self.progress)
        right = QVBoxLayout()
        right.setSpacing(2)
        right.addLayout(line)
        right.addWidget(self.tabs, 1)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(8)
        lay.addWidget(self.form)
        lay.addLayout(right, 1)

    def _mark_gaps_tab(self, gaps: dict[str, Any] | None) -> None:
        i = self.tabs.indexOf(self.gap_plot)
        self.tabs.setTabText(i, "Per-layer gaps (!)" if gaps and gaps.get("first_divergence") else "Per-layer gaps")

    # -- actions -----------------------------------------------------------------------------------
    def run(self) -> None:
        """The current model as a Job (lower as the window does, build, run, profile when asked) in the
        job worker; without a checkout, the doctor explains what is missing."""
        self.form.save_settings()
        if self.is_busy() or not self.lowering.source:
            return
        if not self.form.et_root_path():
            self.doctor(NO_CHECKOUT)
            return
        lowering = replace(self.lowering, target=self.form.cpu.currentText())
        job = target_job(lowering, self.form.run_options(), self.form.profile.isChecked())
        self._begin("run", f"Job {', '.join(job.steps)} of {job.model} for {lowering.target} "
                           f"({lowering.flow} flow) on {job.run.sim} in the job worker")
        self.runner.start(job)

    def selftest(self, variant: str = "selftest") -> None:
        """The self-test firmware: proves toolchain + simulator work without any ExecuTorch."""
        self.form.save_settings()
        if self.is_busy():
            return
        self._begin("selftest", f"self-test '{variant}' for {self.form.cpu.currentText()} on "
                                f"{self.form.sim.currentText()}")
        self.tools.selftest(self.form.cpu.currentText(), self.form.sim.currentText(), self.form.timeout.value(),
                            variant)

    def doctor(self, headline: str = "") -> None:
        if self.tools.is_running() or self.runner.is_running():
            return
        self._headline = headline
        self._begin("doctor", "doctor: checking the toolchain, the simulators and the checkout")
        self.tools.doctor(self.form.et_root_path(), self.form.cmsis_path())

    def cancel(self) -> None:
        """Stop the run (the job worker ends its build or simulator, then exits) or the self-test."""
        if self.runner.is_running() or self.tools.is_running():
            self._append("cmlens-gui", f"cancel: stopping the {self.mode or 'run'} (its build or simulator with it)")
            if not self.runner.cancel():
                self.tools.cancel()

    def _begin(self, mode: str, headline: str) -> None:
        self.mode = mode
        if mode != "doctor":
            self.result_view.clear()
            self.result_view.show_outcome("RUNNING…", OUTCOME_COLORS.get("RUNNING…", "#1565c0"),
                                          f"{mode}: the output streams into the Console tab")
            self.gap_plot.set_gaps(None)
            self._mark_gaps_tab(None)
            self.tabs.setCurrentWidget(self.console)
        self.progress.setValue(0)
        self.progress.setFormat(f"{mode}: starting")
        self._set_busy(True)
        self._append("cmlens-gui", headline)

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)             # idle: the outcome line has the room
        self.form.set_busy(busy, bool(self.lowering.source))

    # -- streamed output ---------------------------------------------------------------------------
    def _append(self, stream: str, text: str) -> None:
        self.console.appendPlainText(console_line(stream, text))

    def _on_line(self, stream: str, text: str) -> None:
        if stream == "progress":                   # a library / runner build (ninja's [N/M])
            from backend_core.firmware.build_speed import parse_progress

            p = parse_progress(text)
            if p is not None:
                done, total = p[2], max(p[3], 1)
                self.progress.setFormat(f"{self.mode}: build {100 * done // total}% ({done}/{total} steps)")
        self._append(stream, text)

    def _on_job_event(self, kind: str, data: dict[str, Any]) -> None:
        """run_step: the progress bar; line: the console; status and step: a note in the console."""
        if kind == "run_step":
            self._advance(str(data.get("name", "")))
        elif kind == "line":
            self._on_line(str(data.get("stream", "stdout")), str(data.get("line", "")))
        elif kind == "status":
            self._append("cmlens", str(data.get("text", "")))
        elif kind == "step":
            self._append("cmlens", f"step {data.get('name', '')}")

    def _advance(self, step: str) -> None:
        """A step of the run: move the progress bar forward (never back)."""
        if step not in STEP_NAMES:
            return
        idx = STEP_NAMES.index(step)
        if idx + 1 >= self.progress.value():
            self.progress.setValue(idx + 1)
            self.progress.setFormat(f"{self.mode}: {step}")

    # -- results -----------------------------------------------------------------------------------
    def _end(self) -> str:
        mode, self.mode = self.mode, ""
        self._set_busy(False)
        self.progress.setValue(self.progress.maximum())
        return mode

    def _cancelled(self, mode: str) -> None:
        self.last_exit = -1
        self.progress.setFormat(f"{mode}: cancelled")
        self.result_view.show_outcome("CANCELLED", OUTCOME_COLORS["CANCELLED"],
                                      "stopped: its build or simulator is ended with it")
        self._append("cmlens-gui", "cancelled")
        self.finished.emit(mode, -1)

    def _on_job_finished(self, status: str, job_result: dict[str, Any] | None) -> None:
        mode = self._end()
        if status == "cancelled":
            self._cancelled(mode)
            return
        self.show_job_result(job_result)
        self.finished.emit(mode, int(self.last_exit if self.last_exit is not None else 3))

    def show_job_result(self, job_result: dict[str, Any] | None) -> None:
        """A target Job's result (JobResult.to_dict()): the run section, or the error and which step gave it."""
        self.last_job_result = job_result
        code = int((job_result or {}).get("exit_code", 3))
        self.last_exit = code
        self.progress.setFormat(f"run: finished, exit status {code}")
        self._append("cmlens-gui", f"job {(job_result or {}).get('status', 'failed')}, exit status {code}")
        run = ((job_result or {}).get("steps") or {}).get("run")
        err = (job_result or {}).get("error")
        if err or not run:
            err = err or {"message": "the job worker ended without a result (see the console)"}
            self.last_result = {"error": err, "exit_code": code}
            step = f"{err['step']} step: " if err.get("step") else ""
            self.result_view.show_error(code, step + str(err.get("message", "")), str(err.get("hint") or ""),
                                        str(err.get("detail") or ""))
            self.tabs.setCurrentWidget(self.result_view.details)
            if code == 2:        # bad input or missing tool: the doctor says what to install
                self.doctor(f"Run on target, exit 2: {err.get('message', '')}")
            return
        self.last_result = {**run, "timings_s": {**(job_result or {}).get("timings_s", {}),
                                                  **(run.get("timings_s") or {})}}
        self._show_run(self.last_result, code)

    def _show_run(self, result: dict[str, Any], code: int) -> None:
        self.result_view.show_result(result, code)
        self.tabs.setCurrentWidget(self.result_view.details)
        self.runFinished.emit(result)
        gaps = result.get("gaps")
        self.gap_plot.set_gaps(gaps)
        self._mark_gaps_tab(gaps)
        if gaps:
            self.tabs.setCurrentWidget(self.gap_plot)

    def _on_tool_finished(self, kind: str, outcome: dict[str, Any]) -> None:
        mode = self._end()
        if outcome.get("cancelled"):
            self._cancelled(mode)
            return
        code = int(outcome.get("exit_code", 3))
        if kind == "doctor":
            self.progress.setFormat("doctor: done")
            self.doctor_view.show_report(outcome.get("result"), self._headline)
            self.tabs.setCurrentWidget(self.doctor_view)
            self.finished.emit(mode, code)
            return
        self.last_exit = code
        self.progress.setFormat(f"{mode}: finished, exit status {code}")
        self._append("cmlens-gui", f"exit status {code}")
        err = outcome.get("error")
        if err:
            self.last_result = {"error": err, "exit_code": code}
            self.result_view.show_error(code, str(err.get("message", "")), str(err.get("hint") or ""),
                                        str(err.get("detail") or ""))
            self.tabs.setCurrentWidget(self.result_view.details)
            self.finished.emit(mode, code)
            if code == 2:
                self.doctor(f"self-test exit 2: {err.get('message', '')}")
            return
        self.last_result = outcome["result"]
        self._show_run(self.last_result, code)
        self.finished.emit(mode, code)
