"""The "Run on target" panel: build -> run -> results for the model shown in the main window.

Self-contained (the main window only calls the public API below): it runs `cmlens run MODEL ...
--json-file F`, `cmlens selftest ...` or `cmlens doctor --json` in a child process (app/runtime/cli_process.py),
streams the output into an append-only console, follows the CLI's `cmlens:` lines to show progress,
and shows the JSON result (app/firmware/views.py). Missing tools or no ExecuTorch checkout show the
doctor's findings with the exact install commands instead of a traceback.

Public API: `TargetPanel(parent)`, `set_model_source(source, target, flow)`, signal `nodeClicked(str)`
(a final-graph node id from the gap plot), `shutdown()` (kill the child process)."""
from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QGridLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPlainTextEdit, QProgressBar, QPushButton, QTabWidget,
                               QToolButton, QVBoxLayout, QWidget)

from backend_core.firmware.uart import abbreviate_line
from backend_core.cpus import DEFAULT_TARGET, TARGETS

from app.runtime.settings import app_settings, get_bool, get_str
from backend_core import protocol

from app.runtime.cli_process import CliProcess
from app.firmware.views import (OUTCOME_COLORS, DoctorView, GapPlot, ResultView, recorded_run_html,
                                recorded_run_summary)
from app.widgets.elided_label import ElidedLabel

CONSOLE_MAX_LINES = 5000
STEP_NAMES = protocol.RUN_STEPS          # `cmlens run/selftest --protocol` step lines drive the progress bar


class TargetPanel(QWidget):
    """Signals:
        nodeClicked(str): final-graph node id of a clicked gap point.
        runFinished(object): the run's result dict (`cmlens run --json-file`), or an ETDump overlay:
            other features (the profile view) show their part of it; the shell connects them.
    """

    nodeClicked = Signal(str)
    runFinished = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source, self.target, self.flow = "", DEFAULT_TARGET, "legacy"
        self.mode = ""                                   # "run" | "selftest" | "doctor" while busy
        self._headline = ""
        self.proc = CliProcess(self)
        self.proc.line.connect(self._on_line)
        self.proc.exited.connect(self._on_finished)
        self.last_result: dict[str, Any] | None = None
        self.last_exit: int | None = None
        self._build_ui()
        self._load_settings()

    # -- public API ------------------------------------------------------------------------------
    def set_model_source(self, source: str, target: str, flow: str) -> None:
        """The model the main window shows; a run uses the same target/flow so node ids match."""
        self.source, self.flow = source, flow
        if target in TARGETS:
            self.cpu.setCurrentText(target)
        self.model_label.setText(f"model: <b>{source or '—'}</b> ({flow} flow)")
        self.run_btn.setEnabled(bool(source) and not self.proc.is_running())

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
        """Kill a running child (window closing); its `finished` is not waited for."""
        self.proc.kill()

    def is_busy(self) -> bool:
        return self.proc.is_running()

    # -- UI ----------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        """Left: what to run and how (a compact form, six rows); right: the outcome line with the
        progress, and the result tabs (details, per-layer gaps, profile, doctor, console). It fits a
        1366x768 laptop's Details dock without scrolling."""
        self.model_label = ElidedLabel("model: <b>—</b>")
        self.model_label.setTextFormat(Qt.TextFormat.RichText)
        self.sim = QComboBox()
        self.sim.addItems(["qemu", "fvp"])
        self.cpu = QComboBox()
        self.cpu.addItems(list(TARGETS))
        self.cpu.setCurrentText(DEFAULT_TARGET)
        self.et_root = QLineEdit()
        self.et_root.setPlaceholderText("ExecuTorch checkout (required to build the runner)")
        self.et_root.setToolTip("ExecuTorch checkout (sources): required to build the runner")
        self.cmsis = QLineEdit()
        self.cmsis.setPlaceholderText("optional; else ExecuTorch's CMake downloads it")
        self.cmsis.setToolTip("CMSIS-NN source tree (optional; else ExecuTorch's CMake downloads it)")
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(5, 3600)
        self.timeout.setValue(120)
        self.timeout.setSuffix(" s")
        self.timeout.setDecimals(0)
        self.timeout.setToolTip("Time limit of the simulator run")
        self.etdump = QCheckBox("ETDump + per-layer gaps")
        self.etdump.setToolTip("ETDump with intermediate outputs: the per-layer gaps, target vs host")
        self.etdump.setChecked(True)
        self.profile = QCheckBox("Per-op profile")
        self.profile.setToolTip("Per-op profile: count the instructions of every operator (QEMU -icount; "
                                "deterministic on QEMU; not cycles)")
        form = QGridLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setHorizontalSpacing(4)
        form.setVerticalSpacing(3)
        form.addWidget(self.model_label, 0, 0, 1, 3)
        row = QHBoxLayout()
        row.setSpacing(4)
        for w in (QLabel("simulator"), self.sim, QLabel("CPU"), self.cpu, QLabel("limit"), self.timeout):
            row.addWidget(w)
        row.addStretch(1)
        form.addLayout(row, 1, 0, 1, 3)
        form.addWidget(QLabel("ExecuTorch"), 2, 0)
        form.addWidget(self._with_browse(self.et_root), 2, 1, 1, 2)
        form.addWidget(QLabel("CMSIS-NN"), 3, 0)
        form.addWidget(self._with_browse(self.cmsis), 3, 1, 1, 2)
        checks = QHBoxLayout()
        checks.addWidget(self.etdump)
        checks.addWidget(self.profile)
        checks.addStretch(1)
        form.addLayout(checks, 4, 0, 1, 3)
        self.run_btn = QPushButton("Run on target")
        self.run_btn.setEnabled(False)
        self.selftest_btn = QPushButton("Self-test")
        self.selftest_btn.setToolTip("Build and run the self-test firmware (no ExecuTorch needed)")
        self.doctor_btn = QPushButton("Doctor")
        self.doctor_btn.setToolTip("Check the toolchain, the simulators and the ExecuTorch checkout")
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        for b in (self.run_btn, self.selftest_btn, self.doctor_btn, self.cancel_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        form.addLayout(buttons, 5, 0, 1, 3)
        form.setRowStretch(6, 1)
        self.run_btn.clicked.connect(self.run)
        self.selftest_btn.clicked.connect(self.selftest)
        self.doctor_btn.clicked.connect(lambda: self.doctor())
        self.cancel_btn.clicked.connect(self.cancel)
        left = QWidget()
        left.setLayout(form)
        left.setMaximumWidth(470)

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
        lay.addWidget(left)
        lay.addLayout(right, 1)

    def _mark_gaps_tab(self, gaps: dict[str, Any] | None) -> None:
        i = self.tabs.indexOf(self.gap_plot)
        self.tabs.setTabText(i, "Per-layer gaps (!)" if gaps and gaps.get("first_divergence") else "Per-layer gaps")

    def _with_browse(self, edit: QLineEdit) -> QWidget:
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(0, 0, 0, 0)
        h.addWidget(edit, 1)
        b = QToolButton()
        b.setText("…")
        b.clicked.connect(lambda: self._browse(edit))
        h.addWidget(b)
        return w

    def _browse(self, edit: QLineEdit) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a directory", edit.text() or os.getcwd())
        if path:
            edit.setText(path)

    def _load_settings(self) -> None:
        s = app_settings()
        self.et_root.setText(get_str(s, "target/et_root", os.environ.get("EXECUTORCH_ROOT", "")))
        self.cmsis.setText(get_str(s, "target/cmsis_nn", os.environ.get("CMSIS_NN_PATH", "")))
        self.sim.setCurrentText(get_str(s, "target/sim", "qemu"))
        self.etdump.setChecked(get_bool(s, "target/etdump", True))
        self.profile.setChecked(get_bool(s, "target/profile", False))

    def _save_settings(self) -> None:
        s = app_settings()
        s.setValue("target/et_root", self.et_root.text().strip())
        s.setValue("target/cmsis_nn", self.cmsis.text().strip())
        s.setValue("target/sim", self.sim.currentText())
        s.setValue("target/etdump", self.etdump.isChecked())
        s.setValue("target/profile", self.profile.isChecked())
        s.sync()

    # -- actions -----------------------------------------------------------------------------------
    def run(self) -> None:
        """`cmlens run` for the current model; without a checkout, the doctor explains what is missing."""
        self._save_settings()
        et_root = self.et_root.text().strip()
        if not et_root:
            self.doctor("No ExecuTorch checkout set: the runner is built from its sources. Clone one "
                        "(command below), set its path above, then press Run again.")
            return
        args = ["run", self.source, "--sim", self.sim.currentText(), "--target", self.cpu.currentText(),
                "--flow", self.flow, "--et-root", et_root, "--timeout", f"{self.timeout.value():g}", "--protocol"]
        if self.cmsis.text().strip():
            args += ["--cmsis-nn", self.cmsis.text().strip()]
        if self.etdump.isChecked():
            args.append("--etdump")
        if self.profile.isChecked():
            args.append("--profile")
        self._start("run", args)

    def selftest(self) -> None:
        """`cmlens selftest`: proves toolchain + simulator work without any ExecuTorch."""
        self._save_settings()
        self._start("selftest", ["selftest", "--sim", self.sim.currentText(), "--target", self.cpu.currentText(),
                                 "--timeout", f"{min(self.timeout.value(), 60):g}", "--protocol"])

    def doctor(self, headline: str = "") -> None:
        args = ["doctor", "--json"]
        if self.et_root.text().strip():
            args += ["--et-root", self.et_root.text().strip()]
        if self.cmsis.text().strip():
            args += ["--cmsis-nn", self.cmsis.text().strip()]
        self._headline = headline
        self._doctor_json: list[str] = []
        self._start("doctor", args, json_file=False)

    def cancel(self) -> None:
        if self.proc.is_running():
            self._append("cmlens-gui", "cancel: killing the process")
            self.proc.kill()

    def _start(self, mode: str, args: list[str], json_file: bool = True) -> None:
        if self.proc.is_running():
            return
        self.mode = mode
        if mode != "doctor":
            self.result_view.clear()
            self.result_view.show_outcome("RUNNING…", OUTCOME_COLORS.get("RUNNING…", "#1565c0"),
                                          f"cmlens {mode}: the output streams into the Console tab")
            self.gap_plot.set_gaps(None)
            self._mark_gaps_tab(None)
            self.tabs.setCurrentWidget(self.console)
        self.progress.setValue(0)
        self.progress.setFormat(f"{mode}: starting")
        self._set_busy(True)
        self._append("cmlens-gui", "$ cmlens " + " ".join(args))
        self.proc.start(args, json_file=json_file)

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)             # idle: the outcome line has the room
        self.run_btn.setEnabled(not busy and bool(self.source))
        self.selftest_btn.setEnabled(not busy)
        self.doctor_btn.setEnabled(not busy)
        self.cancel_btn.setEnabled(busy)

    # -- process output ----------------------------------------------------------------------------
    def _append(self, stream: str, text: str) -> None:
        # Display only (results come from the JSON file): a raw ETDump base64 line is 100+ kB.
        text = abbreviate_line(text)
        self.console.appendPlainText(text if stream != "stderr" else f"! {text}")

    def _on_line(self, stream: str, text: str) -> None:
        if self.mode == "doctor" and stream == "stdout":
            self._doctor_json.append(text)
            return
        msg = protocol.parse_line(text) if stream == "stdout" else None
        if msg is not None:
            if msg.get("type") == protocol.STEP:
                self._advance(str(msg.get("step", "")))
            elif msg.get("type") == protocol.PROGRESS and msg.get("phase") == "build":
                # a library / runner build (ninja's [N/M]): the bar's text says how far, the console which build
                done, total = int(msg.get("done", 0)), max(int(msg.get("total", 1)), 1)
                self.progress.setFormat(f"{self.mode}: build {100 * done // total}% ({done}/{total} steps)")
            return
        self._append(stream, text)

    def _advance(self, step: str) -> None:
        """A step line from the run: move the progress bar forward (never back)."""
        if step not in STEP_NAMES:
            return
        idx = STEP_NAMES.index(step)
        if idx + 1 >= self.progress.value():
            self.progress.setValue(idx + 1)
            self.progress.setFormat(f"{self.mode}: {step}")

    def _on_finished(self, code: int, result: dict[str, Any] | None) -> None:
        mode, self.mode = self.mode, ""
        self._set_busy(False)
        self.last_exit, self.last_result = code, result
        self.progress.setValue(self.progress.maximum())
        if mode == "doctor":
            self.progress.setFormat("doctor: done")
            self._show_doctor("\n".join(self._doctor_json))
            return
        if self.proc.killed:
            self.progress.setFormat(f"{mode}: cancelled")
            self.result_view.show_outcome("CANCELLED", OUTCOME_COLORS["CANCELLED"], "the process was killed")
            self._append("cmlens-gui", "cancelled")
            return
        self.progress.setFormat(f"{mode}: finished, exit status {code}")
        self._append("cmlens-gui", f"exit status {code}")
        err = (result or {}).get("error")
        if err or result is None:
            err = err or {"message": "the process ended without a result (see the console)"}
            self.result_view.show_error(code, err.get("message", ""), err.get("hint", ""), err.get("detail", ""))
            self.tabs.setCurrentWidget(self.result_view.details)
            if code == 2:        # bad input or missing tool: the doctor says what to install
                self.doctor(f"cmlens {mode} exit 2: {err.get('message', '')}")
            return
        self.result_view.show_result(result, code)
        self.tabs.setCurrentWidget(self.result_view.details)
        self.runFinished.emit(result)
        gaps = result.get("gaps")
        self.gap_plot.set_gaps(gaps)
        self._mark_gaps_tab(gaps)
        if gaps:
            self.tabs.setCurrentWidget(self.gap_plot)

    def _show_doctor(self, text: str) -> None:
        import json

        try:
            report = json.loads(text) if text.strip() else None
        except ValueError:
            report = None
            self._append("stdout", text)
        self.doctor_view.show_report(report, self._headline)
        self.tabs.setCurrentWidget(self.doctor_view)
