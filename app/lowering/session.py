"""The lowering session: the one model of a lowering run that every view observes.

It owns the worker job (app.runtime.jobs.WorkerJob: process, errors, cancel), collects the streamed snapshots, diffs
consecutive stages as they arrive, and keeps the quantizer verdicts, the log and the error.
Views never hold pipeline state; they read it from here when a signal says it changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core.models.sniff import is_artefact_path
from backend_core.diff import StageDiff, diff_snapshots
from backend_core.jobs.spec import LowerRequest as JobLowerRequest
from backend_core.provenance import Provenance
from backend_core.snapshot.model import KIND_FALLBACK, GraphSnapshot, NodeSnapshot, snapshot_from_dict

from backend_core import protocol

from app.lowering.source_watch import SourceWatch
from app.runtime.jobs import WorkerJob


@dataclass(frozen=True)
class LowerRequest:
    source: str
    target: str = "cortex-m55"
    flow: str = "legacy"
    calib: str | None = None
    no_cache: bool = False
    channels_last: bool = False     # --channels-last: convert 4-D weights and inputs (default: as given)
    keep_going: bool = True         # the window lowers the rest when a pass fails on an op (the CLI: --keep-going)
    # an artefact's companion files: (("etdump", path), ("etrecord", path), ("program", path), ...)
    companions: tuple[tuple[str, str], ...] = ()

    def job_request(self) -> JobLowerRequest:
        """This lowering as a Job's LowerRequest: every step the window starts (export, numerics,
        accuracy, Run on target, reproducer) lowers exactly as the graph was lowered, kept going included,
        so it gets the same program and the same node ids."""
        calib: str | int | None = self.calib
        if isinstance(calib, str) and calib.isdigit():
            calib = int(calib)
        return JobLowerRequest(target=self.target, flow=self.flow, calib=calib or None,
                               channels_last=self.channels_last, use_cache=not self.no_cache,
                               companions=dict(self.companions) or None, keep_going=self.keep_going)

    @property
    def model_name(self) -> str:
        p = Path(self.source)
        if is_artefact_path(self.source):
            return p.name
        return p.stem if p.suffix in (".py", ".pt2") else self.source


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
        self.job = WorkerJob("lowering worker", {"stage": "loading the model"}, self._crash_stage, self)
        self.job.message.connect(self._on_message)
        self.job.logLine.connect(self._log)
        self.job.errorRaised.connect(self._on_error)
        self.job.finished.connect(self._on_finished)
        self.request: LowerRequest | None = None
        self.auto_relower = False           # lower again by itself when the model changed on disk
        self.source_change = ""             # what changed on disk since the current lowering ("" none)
        # the stages of the lowering this one replaces (same source): the view carries its selection over
        self.previous_snapshots: list[GraphSnapshot] = []
        self.watch = SourceWatch(self)
        self._relower_pending = False
        self.watch.changed.connect(self._on_source_changed)
        self._reset()

    @property
    def worker(self):
        """The worker-process client (tests check its process; `cancel()` kills it)."""
        return self.job.client

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
    def lower(self, request: LowerRequest) -> None:
        """Start lowering (cancels a running one)."""
        self.job.shutdown()
        same = self.request is not None and self.request.source == request.source
        self.previous_snapshots = list(self.snapshots) if same and self.snapshots else []
        self._reset()
        self.request = request
        self.source_change = ""
        self.status = "running"
        self.started.emit()
        self._log(f"$ cmlens lower {request.source} --target {request.target} --flow {request.flow}"
                  + (f" --calib {request.calib}" if request.calib else "")
                  + (" --channels-last" if request.channels_last else ""))
        self.job.start(protocol.lowering_worker_arguments(request.source, request.target, request.flow,
                                                          request.calib, no_cache=request.no_cache,
                                                          channels_last=request.channels_last,
                                                          companions=dict(request.companions), memory=True,
                                                          keep_going=request.keep_going))

    def cancel(self) -> None:
        if self.status != "running":
            return
        self.status = "cancelled"
        self._log("cancelled by the user")
        self.statusText.emit("cancelled")
        self.job.cancel()                # -> finished("cancelled")

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
        return [n for n in f.nodes if n.kind == KIND_FALLBACK] if f else []

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

    def _on_message(self, msg: dict) -> None:
        t = msg.get("type")
        if t == protocol.STATUS:
            self.status_message = str(msg.get("text", ""))
            self._log(f"[status] {self.status_message}")
            self.statusText.emit(self.status_message)
        elif t == protocol.PLANNED:
            self.planned_stages = list(msg.get("stages", []))
            self.planned.emit(self.planned_stages)
        elif t == protocol.STAGE:
            self._add_stage(snapshot_from_dict(msg["snapshot"]))
        elif t == protocol.RESULT and isinstance((msg.get("result") or {}).get("artefact"), dict):
            self.artefact = msg["result"]["artefact"]
            for note in self.artefact.get("notes", []):
                self._log(f"[note] {note}")
            self.artefactLoaded.emit(self.artefact)
        elif t == protocol.DONE:
            self.memory = msg.get("memory")          # the Memory panel's report (worker --memory)
            self.verdicts = msg.get("verdicts") or {}
            self.from_cache = bool(msg.get("from_cache"))
            self.seconds = float(msg.get("seconds") or 0.0)
            self.status = str(msg.get("status", "done"))
            if msg.get("error"):
                self.error = dict(msg["error"])
                self._log(f"[error] stage {self.error.get('stage')}: {self.error.get('message')}")
                self.errorRaised.emit(self.error)
            src = " (from cache)" if self.from_cache else ""
            if msg.get("cache_note"):
                src = f" (not from the cache: {msg['cache_note']})"
            self._log(f"[done] {self.status} in {self.seconds:.1f} s{src}")
            self._watch_sources(msg.get("dependencies"))

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
        elif self.request is not None and Path(self.request.source).is_file():
            self.watch.watch_file(str(Path(self.request.source).resolve()))
        else:
            self.watch.clear()

    def _on_source_changed(self, reason: str) -> None:
        if self.is_running():
            return           # the running lowering's done message re-checks against what it loaded
        self.source_change = reason
        self._log(f"[disk] {reason}" + (": lowering again" if self.auto_relower else ""))
        self.sourceChanged.emit(reason)
        if self.auto_relower and self.request is not None:
            if self.job.has_processes():       # seen in the done message: once the worker has exited
                self._relower_pending = True
            else:
                self.lower(self.request)

    def _on_error(self, error: dict) -> None:
        self.status = "error"
        self.error = error
        # The model could not be loaded (a helper deleted, a syntax error): keep watching what the last
        # lowering was made from and the model file, and take any event as a change that may fix it.
        if not self.watch.paths and self.request is not None and Path(self.request.source).is_file():
            self.watch.watch_file(str(Path(self.request.source).resolve()))
        self.watch.any_event_is_a_change = True
        self._log(f"[error] {error.get('message')}")
        self.errorRaised.emit(error)

    def _on_finished(self, status: str) -> None:
        if status != "cancelled" and self.status != "cancelled":
            self.status = self.status if self.status in ("done", "failed", "error") else status
        self.finished.emit(self.status)
        if self._relower_pending and self.request is not None:
            self._relower_pending = False
            self.lower(self.request)
