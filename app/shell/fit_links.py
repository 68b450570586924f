"""The "Fit this board" wiring of the main window: one FitModel (app.memory.fit) for the lowering on
screen, observed by the Memory tab (its row, the before/after timeline), the graph (per-patch marks, the
grid on the input) and the status bar (progress per candidate with its own Cancel). Another lowering
clears the result (its node ids would not match); the same lowering lowered again keeps it."""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from app.lowering.session import same_lowering
from app.memory.fit import FitModel


def patch_marks(s: dict[str, Any] | None) -> dict[str, Any] | None:
    """The graph's marks of a schedule: the nodes run per patch, the grid, the input node (None: none)."""
    if not s or not s["chosen"]["split"]:
        return None
    return {"nodes": list(s.get("patched_nodes") or []), "grid": tuple(s["chosen"]["grid"]),
            "input": s.get("input_node")}


class FitStatus(QWidget):
    """The status bar's search progress: what it does, candidate k of n, Cancel."""

    def __init__(self, model: FitModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.text = QLabel("")
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(140)
        self.bar.setMaximumHeight(14)
        self.bar.setTextVisible(False)
        self.cancel = QPushButton("Cancel fit")
        self.cancel.setFlat(True)
        self.cancel.clicked.connect(model.cancel)
        for w in (self.text, self.bar, self.cancel):
            lay.addWidget(w)
        model.progress.connect(self._on_progress)
        model.finished.connect(lambda _s: self.hide())
        self.hide()

    def _on_progress(self, text: str, done: int, total: int) -> None:
        self.show()
        short = text if len(text) <= 70 else text[:69] + "…"
        self.text.setText(f"Fit: {short}")
        self.text.setToolTip(text)
        self.bar.setRange(0, total)
        if total:
            self.bar.setValue(done)


def connect_fit(win: Any) -> FitModel:
    """Make the window's FitModel and link it to the Memory tab, the graph and the status bar."""
    fit = FitModel(win)
    fit.set_request_source(lambda: win.session.lowering_job)
    win.memory.set_fit_model(fit)
    win.fit_status = FitStatus(fit, win)
    win.statusBar().addPermanentWidget(win.fit_status)
    fit.resultChanged.connect(lambda s: win.graph.set_patches(patch_marks(s)))
    fit.failed.connect(lambda m: win.statusBar().showMessage(f"Fit this board: {m}", 12000))

    def done(status: str) -> None:
        if status == "done" and fit.result is not None:
            c = fit.result["chosen"]
            win.statusBar().showMessage(f"Fit this board: {fit.result['board']} in {fit.seconds:.0f} s, total RAM "
                                        f"{c['total_ram_bytes']:,} B", 12000)

    fit.finished.connect(done)

    def on_lowering() -> None:
        job = win.session.lowering_job
        if fit.result_job is not None and (job is None or not same_lowering(job, fit.result_job)):
            fit.clear()

    win.session.started.connect(on_lowering)
    return fit
