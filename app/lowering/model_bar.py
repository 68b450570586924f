"""The model toolbar: model (zoo / opened file / recent), target CPU, flow, calibration,
Lower and Cancel, and a progress indicator naming the current stage."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QLabel, QProgressBar,
                               QPushButton, QSizePolicy, QToolButton, QWidget)

from backend_core.stages.models.zoo import ZOO, zoo_names
from backend_core.common.cpus import DEFAULT_TARGET, ISA, TARGETS

from backend_core.orchestration.jobs.spec import Job, LowerRequest

from app.lowering.session import LoweringSession, lowering_job
from app.widgets.elided_label import ElidedLabel
from app.widgets.samples_picker import SamplesPicker
from backend_core.stages.models.sniff import open_filter

ROLE_SOURCE = Qt.ItemDataRole.UserRole + 1


# what Open accepts: model sources, and artefacts ExecuTorch's own flow wrote (read by backend_core.lowering.artefacts)
OPEN_FILTER = open_filter()            # backend_core.stages.models.sniff: the one registry of ExecuTorch formats


class ModelBar(QWidget):
    """Signals:
        lowerRequested(Job): the user pressed Lower (or picked a model with Enter).
        fileOpened(str): a model file was chosen with Open (for the recent list).
    """

    lowerRequested = Signal(object)
    fileOpened = Signal(str)

    def __init__(self, session: LoweringSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(4)                       # the whole bar fits a 1366 px wide window
        lay.addWidget(QLabel("Model"))
        self.model = QComboBox(self)
        self.model.setMinimumWidth(150)
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model.setMinimumContentsLength(16)      # a recent file's long path must not widen the window
        self.model.setToolTip("Zoo model, a .py / .pt2 file, or an ExecuTorch .pte / .bpte / .etrecord / .etdump "
                              "(Open…, or drop it on the window)")
        lay.addWidget(self.model)
        self.open_btn = QToolButton(self)
        self.open_btn.setText("Open…")
        self.open_btn.setToolTip("Open a model file (a .py defining a model, a saved .pt2) or what ExecuTorch's "
                                 "own flow wrote (.pte, .bpte, .etrecord, .etdump)")
        self.open_btn.clicked.connect(self._open)
        lay.addWidget(self.open_btn)
        lay.addSpacing(8)
        lay.addWidget(QLabel("Target"))
        self.target = QComboBox(self)
        for t in TARGETS:
            self.target.addItem(f"{t}  ({ISA[t]})", t)
        self.target.setCurrentIndex(TARGETS.index(DEFAULT_TARGET))
        lay.addWidget(self.target)
        lay.addWidget(QLabel("Flow"))
        self.flow = QComboBox(self)
        self.flow.addItem("legacy", "legacy")
        self.flow.addItem("explicit layout", "explicit")
        lay.addWidget(self.flow)
        self.calib = SamplesPicker("Calibration", "Calibrate", zero_text="default", parent=self)
        lay.addWidget(self.calib)
        self.channels_last = QCheckBox("channels-last", self)
        self.channels_last.setToolTip("Convert the model's 4-D weights and 4-D inputs to channels_last before "
                                      "lowering (--channels-last). Off: the model is lowered exactly as given, "
                                      "and an NCHW conv shows as a layout fallback. The report states the option.")
        lay.addWidget(self.channels_last)
        self.keep_going = QCheckBox("keep going", self)
        self.keep_going.setChecked(True)
        self.keep_going.setToolTip("When an ExecuTorch pass fails on an op, leave that op in float (a pass_failure "
                                   "fallback) and lower the rest, so memory, numerics and a target run still work "
                                   "(--keep-going). Off: the lowering stops at the failing pass, as plain ExecuTorch.")
        lay.addWidget(self.keep_going)
        lay.addSpacing(8)
        self.lower_btn = QPushButton("Lower", self)
        self.lower_btn.setDefault(True)
        self.lower_btn.setToolTip("Lower the model with these options (Ctrl+L)")
        self.lower_btn.clicked.connect(self.request_lower)
        lay.addWidget(self.lower_btn)
        self.cancel_btn = QPushButton("Cancel", self)
        self.cancel_btn.setToolTip("Stop lowering now (kills the worker process)")
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.clicked.connect(session.cancel)
        lay.addWidget(self.cancel_btn)
        self.progress = QProgressBar(self)
        self.progress.setMaximumWidth(110)
        self.progress.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)   # never widens the window
        self.progress.setTextVisible(False)
        self.progress.hide()
        lay.addWidget(self.progress)
        # The model or a file it was made from changed on disk since this lowering (session.sourceChanged).
        self.changed_btn = QToolButton(self)
        self.changed_btn.setText("changed on disk — Lower again")
        self.changed_btn.setObjectName("sourceChanged")
        self.changed_btn.clicked.connect(self.request_lower)
        self.changed_btn.hide()
        lay.addWidget(self.changed_btn)
        self.auto_relower = QToolButton(self)       # compact: the bar must fit a 1366 px screen
        self.auto_relower.setText("⟳ auto")
        self.auto_relower.setCheckable(True)
        self.auto_relower.setToolTip("Re-lower on change: lower again by itself when the model file or a file it "
                                     "imports or reads changes on disk (cmlens gui --watch); the selected op "
                                     "stays selected")
        self.auto_relower.toggled.connect(lambda on: setattr(session, "auto_relower", on))
        lay.addWidget(self.auto_relower)
        self.stage_label = ElidedLabel("", self)      # elided on a narrow window, whole in its tooltip
        lay.addWidget(self.stage_label, 1)
        self.set_models([])
        session.started.connect(self._on_started)
        session.planned.connect(lambda st: self.progress.setRange(0, len(st)))
        session.stageAdded.connect(self._on_stage)
        session.statusText.connect(self._on_status)
        session.finished.connect(self._on_finished)
        session.sourceChanged.connect(self._on_source_changed)

    # ------------------------------------------------------------------ models
    def set_models(self, recent: list[str]) -> None:
        """Fill the model list: zoo models, then recent files."""
        cur = self.current_source()
        self.model.clear()
        for name in zoo_names():
            self.model.addItem(name, name)
            self.model.setItemData(self.model.count() - 1, ZOO[name].description, Qt.ItemDataRole.ToolTipRole)
        if recent:
            self.model.insertSeparator(self.model.count())
            for path in recent:
                self.model.addItem(f"{Path(path).name}  —  {Path(path).parent}", path)
                self.model.setItemData(self.model.count() - 1, path, Qt.ItemDataRole.ToolTipRole)
        if cur:
            self.set_source(cur)

    def current_source(self) -> str:
        return self.model.currentData() or ""

    def set_source(self, source: str) -> None:
        i = self.model.findData(source)
        if i < 0:
            self.model.addItem(Path(source).name if "/" in source or "\\" in source else source, source)
            i = self.model.count() - 1
        self.model.setCurrentIndex(i)

    def set_options(self, target: str | None = None, flow: str | None = None) -> None:
        if target:
            i = self.target.findData(target)
            if i >= 0:
                self.target.setCurrentIndex(i)
        if flow:
            i = self.flow.findData(flow)
            if i >= 0:
                self.flow.setCurrentIndex(i)

    def _open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a model or an ExecuTorch file", "", OPEN_FILTER)
        if path:
            self.fileOpened.emit(path)
            self.set_source(path)
            self.request_lower()

    def lowering_job(self) -> Job:
        """The lowering the bar describes, as the Job the window submits (`session.lowering_job`)."""
        return lowering_job(self.current_source(), LowerRequest(
            self.target.currentData(), self.flow.currentData(), calib=self.calib.value(),
            channels_last=self.channels_last.isChecked(), keep_going=self.keep_going.isChecked()))

    def request_lower(self) -> None:
        if self.current_source():
            self.lowerRequested.emit(self.lowering_job())

    # ------------------------------------------------------------------ progress
    def _on_source_changed(self, reason: str) -> None:
        self.changed_btn.setToolTip(f"{reason} since this lowering: lower it again (Ctrl+L)")
        # It takes the place of Lower and Cancel (idle now): the bar must still fit a 1366 px screen.
        self.lower_btn.hide()
        self.cancel_btn.hide()
        self.changed_btn.show()
        self.stage_label.setText(reason)

    def _on_started(self) -> None:
        self.changed_btn.hide()
        self.lower_btn.show()
        self.cancel_btn.show()
        self.lower_btn.setEnabled(False)
        self.cancel_btn.setEnabled(True)
        self.progress.setRange(0, 0)       # busy until the plan arrives
        self.progress.show()
        self.stage_label.setText("starting the worker…")

    def _on_stage(self, index: int) -> None:
        s = self.session
        self.progress.setValue(index + 1)
        nxt = s.planned_stages[index + 1] if index + 1 < len(s.planned_stages) else None
        total = len(s.planned_stages) or "?"
        self.stage_label.setText(f"running {nxt} ({index + 2}/{total})" if nxt and s.is_running()
                                 else f"{s.snapshots[index].stage} ({index + 1}/{total})")

    def _on_status(self, text: str) -> None:
        if not self.session.snapshots and self.session.is_running():
            self.stage_label.setText(text)

    def _on_finished(self, status: str) -> None:
        self.lower_btn.setEnabled(True)
        self.cancel_btn.setEnabled(False)
        self.progress.hide()
        s = self.session
        text = {"done": f"done in {s.seconds:.1f} s" + (" (cached)" if s.from_cache else ""),
                "failed": f"failed at {(s.error or {}).get('stage', '?')}",
                "cancelled": "cancelled", "error": "error"}.get(status, status)
        fb = len(s.fallbacks())
        if status == "done":
            text += f" · {fb} fallback{'s' if fb != 1 else ''}"
        self.stage_label.setText(text)
