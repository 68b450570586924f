"""The window's "Write reproducer…" row above the graph: shown when ExecuTorch's own pass failed on the
model (a failed lowering, or one that --keep-going got past), it runs the repro Job (backend_core.orchestration.jobs.
repro_step, the same road as `cmlens repro`) in the job worker, shows its progress, can be cancelled,
and ends with the written file and whether a fresh Python process fails the same way."""
from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

from backend_core.stages.fallback.changed import a_pass_failed
from backend_core.orchestration.jobs.spec import Job, ReproOptions

from app.lowering.session import LoweringSession, model_name
from app.runtime.qt_job import QtJob

START_TEXT = "Write reproducer…"
CANCEL_TEXT = "Cancel reproducer"


class ReproRow(QWidget):
    """`choose_path(default) -> str` asks where the file goes ("" = the user cancelled); tests pass their own."""

    def __init__(self, session: LoweringSession, parent: QWidget | None = None,
                 choose_path: Callable[[str], str] | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.choose_path = choose_path or self._ask_path
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 0, 6, 0)
        self.button = QPushButton(START_TEXT, self)
        self.button.setToolTip("Reduce the failing ExecuTorch pass to the smallest standalone Python file "
                               "(torch, torchao, ExecuTorch only) that fails the same way, to file upstream")
        self.button.clicked.connect(self._on_click)
        lay.addWidget(self.button, 0)
        self.label = QLabel("", self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.label, 1)
        self.job_slot = QtJob("job worker", "repro", self)
        self.job_slot.event.connect(self._on_event)
        self.job_slot.finished.connect(self._on_finished)
        self.result: dict[str, Any] | None = None       # the last job_result's repro section
        session.started.connect(self._on_started)
        session.finished.connect(lambda _status: self._refresh())
        self.hide()

    # -- state -----------------------------------------------------------------------------
    def applies(self) -> bool:
        """ExecuTorch's own pass failed on the model: there is a failure to reduce."""
        s = self.session
        failure = (s.error or {}).get("failure") or {}
        return bool(failure.get("op")) or a_pass_failed(s.verdicts)

    def _refresh(self) -> None:
        if self.job_slot.is_running():
            return
        self.setVisible(self.applies())
        if self.applies() and self.result is None:
            self.label.setText("<span style='color:#5d4037'>ExecuTorch's own pass failed on this model: write "
                               "the smallest file that fails the same way, to file upstream.</span>")

    def _on_started(self) -> None:
        if not self.job_slot.is_running():
            self.result = None
            self.hide()

    # -- the job ---------------------------------------------------------------------------
    def start(self, path: str) -> None:
        lowering = self.session.lowering_job
        if lowering is None:
            return
        self.result = None
        self.job_slot.start(repro_job(lowering, path))
        self.button.setText(CANCEL_TEXT)
        self.label.setText("Reducing the failure in a worker process (each candidate is one lowering)…")

    def _on_click(self) -> None:
        if self.job_slot.is_running():
            self.job_slot.cancel(graceful=False)       # lowerings only: no build or simulator to wait for
            return
        lowering = self.session.lowering_job
        if lowering is None:
            return
        file, name = lowering.model.split(":")[0], model_name(lowering.model)
        default = str(Path(file).resolve().parent / f"repro_{name}.py") if file.endswith(".py") \
            else str(Path.cwd() / f"repro_{name}.py")
        path = self.choose_path(default)
        if path:
            self.start(path)

    def _ask_path(self, default: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self, "Write the reproducer to", default, "Python (*.py)")
        return path

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "status":
            self.label.setText(html.escape(str(data.get("text", ""))))

    def _on_finished(self, status: str, job_result: dict | None) -> None:
        self.button.setText(START_TEXT)
        if status == "cancelled" or job_result is None:
            self.label.setText("Reproducer cancelled; nothing was written.")
            return
        rep = (job_result.get("steps") or {}).get("repro")
        err = job_result.get("error") or {}
        self.result = rep
        if rep is None:
            self.label.setText(f"<span style='color:#b71c1c'>No reproducer: {html.escape(str(err.get('message', status)))}"
                               f"</span><br><span style='color:#5d4037'>{html.escape(str(err.get('hint', '')))}</span>")
            return
        proof = ("a fresh Python process fails the same way" if rep.get("reproduces")
                 else f"<span style='color:#b71c1c'>{html.escape(str(err.get('message', 'not checked')))}</span>")
        self.label.setText(f"Wrote <b>{html.escape(rep['path'])}</b>: {rep['lines']} lines, {len(rep['nodes'])} op(s) "
                           f"of the model; {proof}.<br><code>{html.escape(rep['expected'][:160])}</code>")

    def shutdown(self) -> None:
        self.job_slot.shutdown(graceful=False)


def repro_job(lowering: Job, path: str) -> Job:
    """The window's lowering (session.lowering_job) as a repro Job writing `path`."""
    return replace(lowering, steps=("repro",), repro=ReproOptions(output=path))
