"""The lowering session: the one model of a lowering run that every view observes.

It submits the lowering as a Job (steps lower + memory, the Job `cmlens lower` runs) through the window's one
adapter over the worker-process executor (app.runtime.qt_job.QtJob), collects the streamed snapshots, diffs
consecutive stages as they arrive, and keeps the quantizer verdicts, the log and the error.
Views never hold pipeline state; they read it from here when a signal says it changed.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core.stages.models.sniff import is_artefact_path
from backend_core.common.diff import StageDiff, diff_snapshots
from backend_core.orchestration.jobs.spec import Job, LowerRequest
from backend_core.common.provenance import Provenance
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot

from app.lowering.source_watch import SourceWatch
from app.runtime.qt_job import QtJob


def lowering_job(source: str, request: LowerRequest) -> Job:
    """The Job the window submits for a lowering: `cmlens lower SOURCE` plus its memory report. Every other
    window action (export, numerics, accuracy, Run on target, reproducer, verify) is this Job with other
    steps, so it lowers exactly as the graph was lowered, kept going included, with the same node ids."""
    return Job(source, request, steps=("lower", "memory"))


def same_lowering(a: Job, b: Job) -> bool:
    """Whether two Jobs lower the same model the same way (the cache flag aside): their node ids match."""
    return a.model == b.model and replace(a.lower, use_cache=True) == replace(b.lower, use_cache=True)


def model_name(source: str) -> str:
    """How the window names a model source: an artefact's file name, a file's stem, a zoo name."""
    p = Path(source)
    if is_artefact_path(source):
        return p.name
    return p.stem if p.suffix in (".py", ".pt2") else source


class LoweringSession(QObject):
    """State of the current (or last) lowering.

    Signals:
        started(): a new lowering began; everything was cleared.
        planned(list): the stage names the pipeline will run.
        stageAdded(int): snapshot `index` arrived (snapshots/diffs are updated first).
        statusText(str): what the worker is doing now ("importing ExecuTorch", ...).
        logLine(str): a line for the pipeline log (worker stderr, stage warnings).
        errorRaised(dict): a stage failed or the input was bad; keys: stage, node, message,
            hint, traceback. Earlier stages stay available.
        finished(str): done | failed | cancelled | error.
        sourceChanged(str): the model file or a file it was made from changed on disk since this
            lowering ("helper.py changed"); with `auto_relower` the session lowers it again itself.
    """

    started = Signal()
    planned = Signal(object)
    stageAdded = Signal(int)
    statusText = Signal(str)
    logLine = Signal(str)
    errorRaised = Signal(object)
    finished = Signal(str)
    artefactLoaded = Signal(object)     # an artefact was read: its memory plan, bundle, ETDump overlay
    sourceChanged = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = QtJob("lowering worker", "loading the model", self, cancel_grace_ms=0)
        self.job.event.connect(self._on_event)
        self.job.finished.connect(self._on_job_finished)
        self.lowering_job: Job | None = None      # the lowering shown (or running): model, LowerRequest, steps
        self.auto_relower = False           # lower again by itself when the model changed on disk
        self.source_change = ""             # what changed on disk since the current lowering ("" none)
        # the stages of the lowering this one replaces (same source): the view carries its selection over
        self.previous_snapshots: list[GraphSnapshot] = []
        self.watch = SourceWatch(self)
        self._relower_pending = False
        self.watch.changed.connect(self._on_source_changed)
        self._reset()

    @property
    def worker(self) -> QtJob:
        """The job's adapter (tests check its process)."""
        return self.job

    def shutdown(self) -> None:
        """Window closing: end the worker at once (a lowering leaves nothing behind)."""
        self.job.shutdown(graceful=False)

    def _reset(self) -> None:
        self.planned_stages: list[str] = []
        self.snapshots: list[GraphSnapshot] = []
        self.diffs: list[StageDiff | None] = []
        self.status = "idle"              # idle | running | done | failed | cancelled | error
        self.error: dict[str, Any] | None = None
        self.verdicts: dict[str, Any] = {}
        self.memory: dict[str, Any] | None = None
        self.log: list[str] = []
        self.from_cache = False
        self.seconds = 0.0
        self.status_message = ""
        self.artefact: dict[str, Any] | None = None
        self._provenance: Provenance | None = None

    # ------------------------------------------------------------------ control
    def lower(self, job: Job) -> None:
        """Start lowering (cancels a running one). `job`: `lowering_job(source, request)`."""
        self.job.shutdown(graceful=False)
        same = self.lowering_job is not None and self.lowering_job.model == job.model
        self.previous_snapshots = list(self.snapshots) if same and self.snapshots else []
        self._reset()
        self.lowering_job = job
        self.source_change = ""
        self.status = "running"
        self.started.emit()
        req = job.lower
        self._log(f"$ cmlens lower {job.model} --target {req.target} --flow {req.flow}"
                  + (f" --calib {req.calib}" if req.calib else "")
                  + (" --channels-last" if req.channels_last else ""))
        self.statusText.emit("importing ExecuTorch (first time takes ~8 s)")
        self.job.start(job)

    def show_recorded(self, report: dict[str, Any], title: str) -> None:
        """A lowering recorded earlier (a history store keeps each commit's report): its stages shown as a
        finished lowering, nothing lowered. "Lower" then lowers the model file as it is now."""
        from backend_core.analyses.report.json_report import snapshots_from_report

        self.job.shutdown(graceful=False)
        self.previous_snapshots = []
        self._reset()
        self.lowering_job = lowering_job(str(report.get("source") or report.get("model")),
                                         LowerRequest(str(report.get("target") or "cortex-m55"),
                                                      str(report.get("flow") or "legacy")))
        self.status = "running"
        self.started.emit()
        self.planned_stages = list(report.get("planned_stages") or [st["name"] for st in report["stages"]])
        self.planned.emit(self.planned_stages)
        for snap in snapshots_from_report(report):
            self._add_stage(snap)
        self.verdicts = report.get("quantizer") or {}
        self.error = report.get("error")
        self.status = str(report.get("status") or "done")
        self._log(f"[recorded] {title}: the lowering the history store kept (not lowered again)")
        self.watch.clear()
        self.finished.emit(self.status)

    def cancel(self) -> None:
        if self.status != "running":
            return
        self.status = "cancelled"
        self._log("cancelled by the user")
        self.statusText.emit("cancelled")
        self.job.cancel(graceful=False)  # -> finished("cancelled")

    def is_running(self) -> bool:
        return self.status == "running"

    # ------------------------------------------------------------------ queries
    def provenance(self) -> Provenance:
        if self._provenance is None or len(self._provenance.snapshots) != len(self.snapshots):
            self._provenance = Provenance(list(self.snapshots), list(self.diffs))
        return self._provenance

    def final(self) -> GraphSnapshot | None:
        if self.snapshots and self.snapshots[-1].kind == "final":
            return self.snapshots[-1]
        return None

    def fallbacks(self) -> list[NodeSnapshot]:
        f = self.final()
        return f.fallbacks() if f else []

    def stage_index(self, name: str) -> int | None:
        """Find a stage by exact name, index, or case-insensitive substring."""
        if name.isdigit() and int(name) < len(self.snapshots):
            return int(name)
        for s in self.snapshots:
            if s.stage == name:
                return s.index
        low = name.lower()
        for s in self.snapshots:
            if low in s.stage.lower():
                return s.index
        return None

    # ------------------------------------------------------------------ worker stream
    def _log(self, line: str) -> None:
        self.log.append(line)
        self.logLine.emit(line)

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "status":
            self.status_message = str(data.get("text", ""))
            self._log(f"[status] {self.status_message}")
            self.statusText.emit(self.status_message)
        elif kind == "stage":
            if not self.planned_stages and data.get("planned"):
                self.planned_stages = list(data["planned"])
                self.planned.emit(self.planned_stages)
            self._add_stage(data["snapshot"])
        elif kind == "line" and data.get("line"):
            self._log(str(data["line"]))

    def _on_job_finished(self, status: str, row: dict | None) -> None:
        """The Job's result: the lower step's report (verdicts, cache, files it was made from, an artefact's
        extras), the memory step's section, or the error that stopped it."""
        if status == "cancelled" or row is None:
            self._on_finished("cancelled")
            return
        low = (row.get("steps") or {}).get("lower")
        err = row.get("error") or {}
        if low is None:               # refused, crashed, or bad input before any stage: the error panel says why
            stage = err.get("stage") or (self._crash_stage() if err.get("type") == "WorkerDied" else "loading the model")
            self._on_error({"stage": stage, "node": err.get("node"), "message": err.get("message", status),
                            "hint": err.get("hint", ""), "traceback": err.get("detail", "")})
            self._on_finished("error")
            return
        self.verdicts = low.get("quantizer") or {}
        self.from_cache = bool(low.get("from_cache"))
        self.seconds = float(low.get("seconds") or 0.0)
        self.status = str(low.get("status") or "failed")
        if isinstance(low.get("artefact"), dict):
            self.artefact = low["artefact"]
            for note in self.artefact.get("notes", []):
                self._log(f"[note] {note}")
            self.artefactLoaded.emit(self.artefact)
        mem = (row.get("steps") or {}).get("memory")
        self.memory = mem if mem is not None else ({"error": err["message"]} if err.get("step") == "memory" else None)
        if low.get("error"):
            self.error = dict(low["error"])
            self._log(f"[error] stage {self.error.get('stage')}: {self.error.get('message')}")
            self.errorRaised.emit(self.error)
        src = " (from cache)" if self.from_cache else ""
        if low.get("cache_note"):
            src = f" (not from the cache: {low['cache_note']})"
        self._log(f"[done] {self.status} in {self.seconds:.1f} s{src}")
        self._watch_sources(low.get("dependencies"))
        self._on_finished(self.status)

    def _add_stage(self, snap: GraphSnapshot) -> None:
        if snap.index == 0 and self.snapshots:
            # keep going: a pass failed and the worker lowers again with the op left in float; the new
            # round's stages replace the failed round's (the timeline shows one lowering, the final one)
            self.snapshots.clear()
            self.diffs.clear()
            self._log("keep going: lowering again with the failing op(s) left in float")
            self.started.emit()
        prev = self.snapshots[-1] if self.snapshots else None
        self.snapshots.append(snap)
        self.diffs.append(diff_snapshots(prev, snap) if prev is not None else None)
        for line in snap.log:
            self._log(f"[{snap.stage}] {line}")
        n = len(self.planned_stages) or "?"
        self.statusText.emit(f"{snap.stage} done ({snap.index + 1}/{n})")
        self.stageAdded.emit(snap.index)

    def _crash_stage(self) -> str:
        """The stage a crashed worker was in: the first planned stage that did not arrive."""
        if len(self.snapshots) < len(self.planned_stages):
            return self.planned_stages[len(self.snapshots)]
        return "worker"

    # ------------------------------------------------------------------ files on disk
    def _watch_sources(self, deps: list[dict] | None) -> None:
        """Watch what this lowering was made from: the recorded files, else the source file itself
        (an artefact); nothing for a zoo model."""
        if deps:
            self.watch.watch(deps)
        elif self.lowering_job is not None and Path(self.lowering_job.model).is_file():
            self.watch.watch_file(str(Path(self.lowering_job.model).resolve()))
        else:
            self.watch.clear()

    def _on_source_changed(self, reason: str) -> None:
        if self.is_running():
            return           # the running lowering's done message re-checks against what it loaded
        self.source_change = reason
        self._log(f"[disk] {reason}" + (": lowering again" if self.auto_relower else ""))
        self.sourceChanged.emit(reason)
        if self.auto_relower and self.lowering_job is not None:
            if self.job.has_processes():       # seen in the done message: once the worker has exited
                self._relower_pending = True
            else:
                self.lower(self.lowering_job)

    def _on_error(self, error: dict) -> None:
        self.status = "error"
        self.error = error
        # The model could not be loaded (a helper deleted, a syntax error): keep watching what the last
        # lowering was made from and the model file, and take any event as a change that may fix it.
        if not self.watch.paths and self.lowering_job is not None and Path(self.lowering_job.model).is_file():
            self.watch.watch_file(str(Path(self.lowering_job.model).resolve()))
        self.watch.any_event_is_a_change = True
        self._log(f"[error] {error.get('message')}")
        self.errorRaised.emit(error)

    def _on_finished(self, status: str) -> None:
        if status != "cancelled" and self.status != "cancelled":
            self.status = self.status if self.status in ("done", "failed", "error") else status
        self.finished.emit(self.status)
        if self._relower_pending and self.lowering_job is not None:
            self._relower_pending = False
            self.lower(self.lowering_job)
