"""Tools > Compare with…: the second side (a model, `.pte`/`.bpte`/`.etrecord` or saved `--json`;
by default the current model again) and its options, turned into `cmlens compare` arguments whose
side 1 is the current lowering. More sides (N-way) can be typed as `cmlens compare` sides."""
from __future__ import annotations

import shlex
from pathlib import Path

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget)

from backend_core.common.cpus import TARGETS
from backend_core.stages.models.sniff import is_artefact_path, open_filter


def side_text(source: str, target: str | None = None, flow: str | None = None, activations: str | None = None,
              channels_last: bool | None = None) -> str:
    """`SOURCE@target=…,flow=…` (docs: `cmlens compare --help`); an artefact or JSON takes no options."""
    if is_artefact_path(source) or Path(source).suffix.lower() == ".json":   # read as it is: no options
        return source
    opts = [f"{k}={v}" for k, v in (("target", target), ("flow", flow), ("activations", activations)) if v]
    if channels_last is not None:
        opts.append(f"channels_last={'yes' if channels_last else 'no'}")
    return source + ("@" + ",".join(opts) if opts else "")


class CompareDialog(QDialog):
    def __init__(self, source: str, target: str, flow: str, channels_last: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare with…")
        self.current = (source, target, flow, channels_last)
        form = QFormLayout(self)
        form.addRow(QLabel(f"Side 1 (current): <b>{source}</b> on {target}, {flow}"
                           + (", channels-last" if channels_last else "")))
        self.source = QLineEdit(source)
        self.source.setPlaceholderText("model .py / .pt2, a .pte / .bpte / .etrecord, or a `cmlens lower --json` file")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.source, 1)
        row.addWidget(browse)
        form.addRow("Side 2: model or file", row)
        self.target = QComboBox()
        self.target.addItems(list(TARGETS))
        other = "cortex-m4" if target != "cortex-m4" else "cortex-m55"
        self.target.setCurrentText(other)
        form.addRow("CPU", self.target)
        self.flow = QComboBox()
        self.flow.addItems(["legacy", "explicit"])
        self.flow.setCurrentText(flow)
        form.addRow("Flow", self.flow)
        self.activations = QComboBox()
        self.activations.addItems(["int8", "int16"])
        form.addRow("Activations", self.activations)
        self.channels_last = QCheckBox("channels-last")
        self.channels_last.setChecked(channels_last)
        form.addRow("Layout", self.channels_last)
        self.more = QLineEdit()
        self.more.setPlaceholderText("optional, e.g. model.py@m7 old.json (cmlens compare side syntax)")
        form.addRow("More sides", self.more)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Compare")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Second side", "", open_filter().replace(
            "Models and ExecuTorch files (", "Models, artefacts and reports (*.json ", 1))
        if path:
            self.source.setText(path)

    def side_args(self) -> list[str]:
        """The `cmlens compare` arguments: current side, the second side, any more sides."""
        src, target, flow, cl = self.current
        first = side_text(src, target, flow, None, cl)
        second = side_text(self.source.text().strip() or src, self.target.currentText(), self.flow.currentText(),
                           self.activations.currentText(), self.channels_last.isChecked())
        return [first, second, *shlex.split(self.more.text())]
