"""AccuracyPanel: does the int8 model still do its job? The `evaluate` step (backend_core.analyses.accuracy) of the
lowering the window shows, run as a Job in the job worker (app.runtime.qt_job.QtJob: torch never enters the
GUI process, the UI thread never waits, Cancel kills the worker).

Public API (the shell wires it; this package imports no other feature package):
- `AccuracyPanel(parent)`; `set_request_source(fn)`: fn() -> the lowering Job (app.lowering.session.lowering_job) of
  the lowering on screen, or None;
- `run_current()`, `cancel()`, `shutdown()`, `clear()`, `is_running()`;
- `set_result(evaluate_section)`: show an evaluate step's JSON (what a Job's result carries);
- `result()`, `error`: the evaluation shown, the last failure (earlier results stay on screen after one);
- `select_flip(row)`: pick a flipped sample (as a click does);
- signals `heatChanged(object)` ({final node id: QColor}, {} = off), `nodeClicked(str)` (the layer that
  flipped the sample picked), `message(str)`, `finished(str)` (done | failed | cancelled | error);
- `heat_info()`: (worst dB, best dB, label) of the heat colours."""
from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QSpinBox,
                               QSplitter, QStackedWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from backend_core.orchestration.jobs.spec import Job

from app.accuracy.charts import AccuracyBars, ConfusionMatrices, Thumbnail, models_in
from app.accuracy.texts import flip_head, flip_row, headline, title_html
from app.runtime.qt_job import QtJob
from app.widgets import theme
from app.widgets.elided_label import ElidedLabel

HEAT_MAP = "inferno"
EMPTY = ("Accuracy on labelled data: the float model, the PT2E fake-quant model and the lowered program on the "
         "same samples (the model's get_eval_data(), or a folder), and for every prediction int8 flipped, the "
         "layer that flipped it. Lower a model, then press Evaluate.")
FLIP_COLUMNS = ("sample", "true", "float→low", "flipped at (layer)", "SQNR", "usual")

Source = Callable[[], "Job | None"]


def evaluation_job(lowering: Job, data: str | None, limit: int | None, on_target: int = 0,
                   et_root: str | None = None, cmsis_nn: str | None = None) -> Any:
    """The Job the tab runs: lower (the lowering on screen: same options, kept going included, so node
    ids match) + evaluate; with `on_target` K, the first K samples also on the board
    (backend_core.orchestration.jobs.target_run.evaluate)."""
    from backend_core.orchestration.jobs.spec import EvaluateOptions, RunOptions

    return replace(lowering, steps=("lower", "evaluate"), run=RunOptions(et_root=et_root or None, cmsis_nn=cmsis_nn or None),
               evaluate=EvaluateOptions(data=data or None, limit=limit, on_target=on_target))


def checkout_paths() -> tuple[str | None, str | None]:
    """The ExecuTorch checkout and CMSIS-NN tree the Run-on-target tab remembers (settings), else the
    environment's EXECUTORCH_ROOT / CMSIS_NN_PATH."""
    import os

    from app.runtime.settings import app_settings

    s = app_settings()
    et = str(s.value("target/et_root") or "") or os.environ.get("EXECUTORCH_ROOT")
    cm = str(s.value("target/cmsis_nn") or "") or os.environ.get("CMSIS_NN_PATH")
    return et or None, cm or None


class AccuracyPanel(QWidget):
    heatChanged = Signal(object)
    nodeClicked = Signal(str)
    message = Signal(str)
    finished = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source: Source = lambda: None
        self._result: dict[str, Any] | None = None
        self._heat: tuple[float, float, str] = (0.0, 60.0, "")
        self.error: dict[str, Any] | None = None
        self.job_slot = QtJob("job worker", "evaluate", self)
        self.job_slot.event.connect(self._on_event)
        self.job_slot.finished.connect(self._on_finished)

        top = self._toolbar()
        self.problem = ElidedLabel("")
        self.problem.setTextFormat(Qt.TextFormat.RichText)
        self.problem.setVisible(False)
        self.title = ElidedLabel("")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.target_line = ElidedLabel("")            # K samples on the board: bit-exact with the lowered program?
        self.target_line.setTextFormat(Qt.TextFormat.RichText)
        self.target_line.setVisible(False)

        self.bars = AccuracyBars()
        self.matrices = ConfusionMatrices()
        flips_w = self._flip_view()
        self.split = QSplitter(Qt.Orientation.Horizontal)
        for w, stretch in ((self.bars, 2), (self.matrices, 5), (flips_w, 5)):
            self.split.addWidget(w)
            self.split.setStretchFactor(self.split.count() - 1, stretch)
        self.split.setChildrenCollapsible(False)
        self.split.setSizes([240, 560, 560])
        self.placeholder = QLabel(EMPTY)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet(theme.PLACEHOLDER_STYLE)
        self.body = QStackedWidget()
        self.body.addWidget(self.placeholder)
        self.body.addWidget(self.split)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.problem)
        lay.addWidget(self.title)
        lay.addWidget(self.target_line)
        lay.addWidget(self.body, 1)

    def _toolbar(self) -> QHBoxLayout:
        """Evaluate, the data folder, how many samples (on the host and on the target), Cancel, status."""
        self.run_btn = QPushButton("Evaluate")
        self.run_btn.setToolTip("Lower the model on screen again in the job worker and evaluate it: float, "
                                "fake-quant and the lowered program on the same labelled samples")
        self.run_btn.clicked.connect(self.run_current)
        self.data = QLineEdit()
        self.data.setPlaceholderText("data: the model's get_eval_data(), or a folder…")
        self.data.setToolTip("A folder of *.npy/*.pt samples with labels.csv (file,label), or images in one "
                             "sub-folder per class. Empty: the model's own get_eval_data().")
        self.data.setMinimumWidth(160)
        self.browse = QPushButton("…")
        self.browse.setMaximumWidth(28)
        self.browse.setToolTip("Pick a data folder")
        self.browse.clicked.connect(self._browse)
        self.limit = QSpinBox()
        self.limit.setRange(0, 1_000_000)
        self.limit.setSpecialValueText("all samples")
        self.limit.setSuffix(" samples")
        self.limit.setToolTip("Evaluate the first N samples only (all: 0)")
        self.on_target = QSpinBox()
        self.on_target.setRange(0, 1000)
        self.on_target.setSpecialValueText("host only")
        self.on_target.setPrefix("on target: ")
        self.on_target.setToolTip("Also run the first K samples on the board of the lowering's CPU (QEMU), in one "
                                  "firmware, each checked bit for bit against the lowered program (the ExecuTorch "
                                  "checkout of Run on target, or EXECUTORCH_ROOT). 16 is the usual K.")
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        self.cancel_btn.clicked.connect(self.cancel)
        self.status = ElidedLabel("")
        self.status.setStyleSheet(theme.MUTED_STYLE)
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 0)
        top.setSpacing(4)
        for w in (self.run_btn, self.data, self.browse, self.limit, self.on_target, self.cancel_btn):
            top.addWidget(w)
        top.addWidget(self.status, 1)
        return top

    def _flip_view(self) -> QWidget:
        """The samples whose prediction flipped, with the first layer where each departs, and its thumbnail."""
        self.flips = QTreeWidget()
        self.flips.setRootIsDecorated(False)
        self.flips.setHeaderLabels(list(FLIP_COLUMNS))
        for col, tip in enumerate(("the evaluation sample", "its label", "float's prediction → the lowered program's",
                                   "the first layer where this sample's error departs from the usual error",
                                   "this sample's SQNR there (lowered vs float)",
                                   "the median SQNR there over samples that did not flip")):
            self.flips.headerItem().setToolTip(col, tip)
        self.flips.setUniformRowHeights(True)
        self.flips.header().setStretchLastSection(False)
        self.flips.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.flips.header().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.flips.currentItemChanged.connect(lambda cur, _prev: self._on_flip(cur))
        self.flip_head = ElidedLabel("")
        self.flip_head.setTextFormat(Qt.TextFormat.RichText)
        self.thumb = Thumbnail()
        self.flip_info = QLabel("")
        self.flip_info.setWordWrap(True)
        self.flip_info.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.flip_info.setTextFormat(Qt.TextFormat.RichText)
        side = QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.thumb)
        side.addWidget(self.flip_info, 1)
        side_w = QWidget()
        side_w.setLayout(side)
        side_w.setFixedWidth(Thumbnail.SIZE + 8)
        flip_row = QHBoxLayout()
        flip_row.setContentsMargins(0, 0, 0, 0)
        flip_row.addWidget(self.flips, 1)
        flip_row.addWidget(side_w)
        flip_box = QVBoxLayout()
        flip_box.setContentsMargins(0, 0, 0, 0)
        flip_box.setSpacing(2)
        flip_box.addWidget(self.flip_head)
        flip_box.addLayout(flip_row, 1)
        flips_w = QWidget()
        flips_w.setLayout(flip_box)
        return flips_w

    # -- public API ------------------------------------------------------------------------------
    def set_request_source(self, fn: Source) -> None:
        self._source = fn

    def result(self) -> dict[str, Any] | None:
        return self._result

    def is_running(self) -> bool:
        return self.job_slot.is_running()

    def run_current(self) -> None:
        """Evaluate the lowering on screen (its source and options) on the data picked."""
        if self.job_slot.is_running():
            return
        src = self._source()
        if src is None or not src.model:
            self._fail({"message": "Nothing to evaluate: no model is open.", "hint": "Open or lower a model first."})
            return
        data = self.data.text().strip() or None
        if data:
            problem = self._check_folder(data)
            if problem is not None:
                self._fail(problem)
                return
        k = self.on_target.value()
        et_root, cmsis = checkout_paths() if k else (None, None)
        if k and not et_root:
            self._fail({"message": "On target needs an ExecuTorch checkout to build the runner.",
                        "hint": "Set it in Run on target (ExecuTorch checkout), or EXECUTORCH_ROOT; or evaluate on "
                                "the host only."})
            return
        job = evaluation_job(src, data, self.limit.value() or None, k, et_root, cmsis)
        self.problem.setVisible(False)
        self._set_busy(True, f"evaluating {Path(src.model).name} ({src.lower.target}): starting the job worker…")
        self.job_slot.start(job)

    def cancel(self) -> None:
        # on the host no build runs: nothing of the worker could be orphaned, stop it now; on target the
        # worker stops its build or simulator first (SIGTERM, then the grace)
        on_target = bool(self.job_slot.job is not None and self.job_slot.job.evaluate.on_target)
        if self.job_slot.cancel(graceful=on_target):
            self.status.setText("cancelling…")

    def shutdown(self) -> None:
        self.job_slot.shutdown(graceful=bool(self.job_slot.job is not None and self.job_slot.job.evaluate.on_target))

    def clear(self) -> None:
        self.set_result(None)
        self.problem.setVisible(False)

    def set_result(self, ev: dict[str, Any] | None) -> None:
        self._result = ev
        self.bars.set_result(ev)
        self.matrices.set_result(ev)
        self.flips.clear()
        self.thumb.set_input(None)
        self.flip_info.setText("")
        self.heatChanged.emit({})
        if not ev:
            self.title.setText("")
            self.target_line.setVisible(False)
            self.flip_head.setText("")
            self.body.setCurrentWidget(self.placeholder)
            return
        self.title.setText(title_html(ev))
        tr = ev.get("target_run") or {}
        self.title.setToolTip(headline(ev))
        if tr.get("summary"):
            ok = tr.get("bit_exact") == tr.get("k")
            color = theme.UI["ok"] if ok else theme.UI["bad"]
            self.target_line.setText(f"<span style='color:{color}'><b>target:</b> {html.escape(tr['summary'])}</span>")
            self.target_line.setToolTip(tr["summary"])
        self.target_line.setVisible(bool(tr.get("summary")))
        self._fill_flips(ev)
        self.body.setCurrentWidget(self.split)
        self.bars.setVisible(bool(models_in(ev)) and ev.get("task") == "classification")
        self.matrices.setVisible(bool(self.matrices.matrices()))

    def flip_rows(self) -> list[dict[str, Any]]:
        return list(((self._result or {}).get("flips") or {}).get("samples") or [])

    def select_flip(self, row: int) -> None:
        item = self.flips.topLevelItem(row)
        if item is not None:
            self.flips.setCurrentItem(item)

    def heat_info(self) -> tuple[float, float, str]:
        return self._heat

    # -- the job ---------------------------------------------------------------------------------
    def _check_folder(self, data: str) -> dict[str, Any] | None:
        """A missing, empty or unlabelled folder, said at once (no worker, earlier results stay)."""
        from backend_core.analyses.accuracy.data import folder_layout
        from backend_core.common.errors import CmlensError

        try:
            folder_layout(data)
        except CmlensError as e:
            return {"message": e.message, "hint": e.hint}
        return None

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "status":
            self.status.setText(str(data.get("text", "")))
        elif kind == "step":
            self.status.setText(f"{data.get('name', '')} step…")

    def _on_finished(self, status: str, job_result: dict | None) -> None:
        self._set_busy(False)
        if status == "cancelled":
            self.status.setText("evaluation cancelled; the results before it stay")
            self.message.emit("Evaluation cancelled")
            self.finished.emit("cancelled")
            return
        err = (job_result or {}).get("error")
        ev = ((job_result or {}).get("steps") or {}).get("evaluate")
        if err or not ev:
            self._fail(err or {"message": "The evaluation gave no result.", "hint": "See the pipeline log."},
                       "failed" if status != "error" else "error")
            return
        self.error = None
        self.status.setText(f"evaluated {ev['samples']} samples in {ev.get('seconds', 0):.1f} s")
        self.set_result(ev)
        self.message.emit(f"Accuracy: {headline(ev)}")
        self.finished.emit("done")

    def _fail(self, err: dict[str, Any], status: str = "failed") -> None:
        """Say what went wrong and how to fix it; the results shown before stay."""
        self.error = err
        step = f" ({err['step']} step)" if err.get("step") and err["step"] not in ("job", "worker") else ""
        text = (f"<span style='color:{theme.UI['bad']}'><b>{html.escape(str(err.get('message', '')))}</b>{step}</span>"
                + (f" {html.escape(str(err.get('hint', '')))}" if err.get("hint") else "")
                + (" <i>(the results below are the previous evaluation's)</i>" if self._result else ""))
        self.problem.setText(text)
        self.problem.setToolTip(f"{err.get('message', '')}\n{err.get('hint', '')}")
        self.problem.setVisible(True)
        self.status.setText("evaluation failed")
        self.message.emit(f"Evaluation failed: {err.get('message', '')}")
        self.finished.emit(status)

    def _set_busy(self, busy: bool, text: str = "") -> None:
        self.run_btn.setEnabled(not busy)
        self.cancel_btn.setEnabled(busy)
        if text:
            self.status.setText(text)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Evaluation data folder", self.data.text())
        if folder:
            self.data.setText(folder)

    # -- drawing ---------------------------------------------------------------------------------
    def _fill_flips(self, ev: dict[str, Any]) -> None:
        text, tip = flip_head(ev)
        self.flip_head.setText(text)
        self.flip_head.setToolTip(tip)
        labels = {lay["node"]: lay for lay in (ev.get("flips") or {}).get("layers", [])}
        for r in (ev.get("flips") or {}).get("samples") or []:
            cells, tip = flip_row(ev, r, labels)
            item = QTreeWidgetItem(cells)
            item.setToolTip(3, tip)
            item.setData(0, Qt.ItemDataRole.UserRole, r)
            self.flips.addTopLevelItem(item)

    def _on_flip(self, item: QTreeWidgetItem | None) -> None:
        """A flipped sample: its input as a thumbnail, the graph coloured by its per-layer error (SQNR of
        the lowered program against float on that sample), the layer that flipped it selected."""
        if item is None:
            self.heatChanged.emit({})
            return
        r = item.data(0, Qt.ItemDataRole.UserRole) or {}
        is_image = self.thumb.set_input(r.get("input"))
        prof = r.get("profile_db") or {}
        usual = ((self._result or {}).get("flips") or {}).get("median_profile_db") or {}
        info = [f"<b>{html.escape(str(r.get('sample')))}</b>", f"float margin {r.get('float_margin', 0):.3g}"]
        if r.get("largest_drop_layer") and r.get("largest_drop_db") is not None:
            info.append(f"largest drop {r['largest_drop_db']:.1f} dB below usual")
        if not is_image and r.get("input") is None:
            info.append("(input too large to show)")
        self.flip_info.setText("<br>".join(info))
        if not prof:
            self.heatChanged.emit({})
            return
        import pyqtgraph as pg

        lo, hi = min(prof.values()), max(prof.values())
        if hi - lo < 10:
            hi = lo + 10
        cmap = pg.colormap.get(HEAT_MAP)
        colors = {nid: cmap.map(1.0 - max(0.0, min(1.0, (v - lo) / (hi - lo))), mode="qcolor")
                  for nid, v in prof.items()}
        self._heat = (lo, hi, f"{r.get('sample')}, lowered vs float")
        self.heatChanged.emit(colors)
        if r.get("layer"):
            self.nodeClicked.emit(r["layer"])
        worst = r.get("layer")
        if worst and worst in usual:
            layers = {x["node"]: x for x in ((self._result or {}).get("flips") or {}).get("layers", [])}
            self.message.emit(f"{r.get('sample')} flipped at {layers.get(worst, {}).get('label', worst)}: SQNR "
                              f"{prof.get(worst, 0):.1f} dB there vs {usual[worst]:.1f} dB usual")
