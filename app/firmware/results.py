"""The right side of "Run on target": the outcome line with the progress bar, and the result tabs
(details, per-layer gaps, other features' views, doctor, console). It shows what it is given (a job's
`job_result`, a self-test's result, the doctor's report, streamed lines) and holds no run state."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QProgressBar, QTabWidget, QVBoxLayout, QWidget

from backend_core.common import protocol
from backend_core.target.simulate.uart import abbreviate_line

from app.firmware.views import (OUTCOME_COLORS, DoctorView, GapPlot, ResultView, recorded_run_html,
                                recorded_run_summary)

CONSOLE_MAX_LINES = 5000
STEP_NAMES = protocol.RUN_STEPS          # a run's `run_step` events (a self-test's steps are a subset)


def console_line(stream: str, text: str) -> str:
    """How a streamed line reads in the console (as `cmlens run` prints it): UART lines, the run's own
    notes, build output, errors. A raw ETDump base64 line (100+ kB) is abbreviated: the results come
    from the job's JSON, not from the console."""
    text = abbreviate_line(text)
    if stream == "uart":
        return f"uart> {text}"
    if stream in ("cmlens", "progress"):
        return f"cmlens: {text}"
    if stream == "stderr":
        return f"! {text}"
    return f"  | {text}"


class TargetResults(QWidget):
    """Signals: nodeClicked(str) (a gap point's final-graph node id), shown(object) (a run's result dict
    or a recorded ETDump's overlay, as it is shown: other features show their part of it)."""

    nodeClicked = Signal(str)
    shown = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = ""
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
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(line)
        lay.addWidget(self.tabs, 1)

    def add_result_tab(self, widget: QWidget, title: str) -> None:
        """Another feature's view of a run's result, before the Doctor and Console tabs."""
        self.tabs.insertTab(self.tabs.indexOf(self.doctor_view), widget, title)

    # -- while something runs ----------------------------------------------------------------------
    def begin(self, mode: str, headline: str) -> None:
        """`mode` (run | selftest | doctor) starts: a run or self-test clears the last result."""
        self.mode = mode
        if mode != "doctor":
            self.result_view.clear()
            self.result_view.show_outcome("RUNNING…", OUTCOME_COLORS.get("RUNNING…", "#1565c0"),
                                          f"{mode}: the output streams into the Console tab")
            self.show_gaps(None)
            self.tabs.setCurrentWidget(self.console)
        self.progress.setValue(0)
        self.progress.setFormat(f"{mode}: starting")
        self.progress.show()
        self.append("cmlens", headline)

    def append(self, stream: str, text: str) -> None:
        self.console.appendPlainText(console_line(stream, text))

    def on_line(self, stream: str, text: str) -> None:
        """A streamed line; a build's progress line ("N% (done/total steps)") also moves the bar's text."""
        if stream == "progress":
            from backend_core.target.build.speed import parse_progress

            p = parse_progress(text)
            if p is not None:
                done, total = p[2], max(p[3], 1)
                self.progress.setFormat(f"{self.mode}: build {100 * done // total}% ({done}/{total} steps)")
        self.append(stream, text)

    def advance(self, step: str) -> None:
        """A step of the run: move the progress bar forward (never back)."""
        if step not in STEP_NAMES:
            return
        idx = STEP_NAMES.index(step)
        if idx + 1 >= self.progress.value():
            self.progress.setValue(idx + 1)
            self.progress.setFormat(f"{self.mode}: {step}")

    def end(self, text: str) -> str:
        """The mode that ended; the bar is full with `text` (hidden: the outcome line has the room)."""
        mode, self.mode = self.mode, ""
        self.progress.setValue(self.progress.maximum())
        self.progress.setFormat(f"{mode}: {text}")
        self.progress.hide()
        return mode

    # -- outcomes ------------------------------------------------------------------------------------
    def show_cancelled(self) -> None:
        self.result_view.show_outcome("CANCELLED", OUTCOME_COLORS["CANCELLED"],
                                      "stopped: its build or simulator is ended with it")
        self.append("cmlens", "cancelled")

    def show_error(self, code: int, err: dict[str, Any]) -> None:
        step = f"{err['step']} step: " if err.get("step") else ""
        self.result_view.show_error(code, step + str(err.get("message", "")), str(err.get("hint") or ""),
                                    str(err.get("detail") or ""))
        self.tabs.setCurrentWidget(self.result_view.details)

    def show_run(self, result: dict[str, Any], code: int) -> None:
        """A run's (or self-test's) result dict: the outcome line, the details, the gaps when there are."""
        self.result_view.show_result(result, code)
        self.tabs.setCurrentWidget(self.result_view.details)
        self.shown.emit(result)
        gaps = result.get("gaps")
        self.show_gaps(gaps)
        if gaps:
            self.tabs.setCurrentWidget(self.gap_plot)

    def show_recorded(self, overlay: dict[str, Any], name: str, notes: list[str] | None = None) -> None:
        """An ETDump recorded elsewhere: its gaps in the same plot, its per-op rows and notes in the details."""
        self.result_view.show_recorded(recorded_run_summary(overlay, name))
        self.result_view.details.setHtml(recorded_run_html(overlay, name, notes))
        self.show_gaps(overlay.get("gaps"))
        self.tabs.setCurrentWidget(self.gap_plot)
        self.shown.emit(overlay)

    def show_doctor(self, report: dict[str, Any] | None, headline: str) -> None:
        self.doctor_view.show_report(report, headline)
        self.tabs.setCurrentWidget(self.doctor_view)

    def show_gaps(self, gaps: dict[str, Any] | None) -> None:
        self.gap_plot.set_gaps(gaps)
        i = self.tabs.indexOf(self.gap_plot)
        self.tabs.setTabText(i, "Per-layer gaps (!)" if gaps and gaps.get("first_divergence") else "Per-layer gaps")
