"""The "Run on target" form: what to run and how (a compact grid, six rows), remembered in QSettings.

Its choices become a `RunOptions` (`run_options()`): the one description of a target run the Job, the
CLI and sweeps share; the form never knows a command line."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QGridLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QToolButton, QWidget)

from backend_core.common.cpus import DEFAULT_TARGET, TARGETS
from backend_core.orchestration.jobs.spec import RunOptions

from app.runtime.settings import app_settings, get_bool, get_str
from app.widgets.elided_label import ElidedLabel


class TargetForm(QWidget):
    """Controls: model_label, sim, cpu, timeout, et_root, cmsis, etdump, profile and the buttons
    run_btn, selftest_btn, doctor_btn, cancel_btn (the panel connects them)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
        self.run_btn = QPushButton("Run on target")
        self.run_btn.setEnabled(False)
        self.selftest_btn = QPushButton("Self-test")
        self.selftest_btn.setToolTip("Build and run the self-test firmware (no ExecuTorch needed)")
        self.doctor_btn = QPushButton("Doctor")
        self.doctor_btn.setToolTip("Check the toolchain, the simulators and the ExecuTorch checkout")
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        self._lay_out()
        self.setMaximumWidth(470)
        self.load_settings()

    def _lay_out(self) -> None:
        form = QGridLayout(self)
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
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        for b in (self.run_btn, self.selftest_btn, self.doctor_btn, self.cancel_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        form.addLayout(buttons, 5, 0, 1, 3)
        form.setRowStretch(6, 1)

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

    # -- what the form says ------------------------------------------------------------------------
    def et_root_path(self) -> str:
        return self.et_root.text().strip()

    def cmsis_path(self) -> str:
        return self.cmsis.text().strip()

    def run_options(self) -> RunOptions:
        """The run's options (target and flow come from the lowering: Job.run_options())."""
        return RunOptions(target=self.cpu.currentText(), sim=self.sim.currentText(),
                          timeout=float(self.timeout.value()), etdump=self.etdump.isChecked(),
                          profile=self.profile.isChecked(), et_root=self.et_root_path() or None,
                          cmsis_nn=self.cmsis_path() or None)

    def set_busy(self, busy: bool, can_run: bool) -> None:
        self.run_btn.setEnabled(not busy and can_run)
        self.selftest_btn.setEnabled(not busy)
        self.doctor_btn.setEnabled(not busy)
        self.cancel_btn.setEnabled(busy)

    # -- settings ----------------------------------------------------------------------------------
    def load_settings(self) -> None:
        s = app_settings()
        self.et_root.setText(get_str(s, "target/et_root", os.environ.get("EXECUTORCH_ROOT", "")))
        self.cmsis.setText(get_str(s, "target/cmsis_nn", os.environ.get("CMSIS_NN_PATH", "")))
        self.sim.setCurrentText(get_str(s, "target/sim", "qemu"))
        self.etdump.setChecked(get_bool(s, "target/etdump", True))
        self.profile.setChecked(get_bool(s, "target/profile", False))

    def save_settings(self) -> None:
        s = app_settings()
        s.setValue("target/et_root", self.et_root_path())
        s.setValue("target/cmsis_nn", self.cmsis_path())
        s.setValue("target/sim", self.sim.currentText())
        s.setValue("target/etdump", self.etdump.isChecked())
        s.setValue("target/profile", self.profile.isChecked())
        s.sync()
