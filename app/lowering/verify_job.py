"""Verify a fallback's suggested change: a lowering Job with `verify_suggestions` (what `cmlens lower
--verify-suggestions` runs) re-lowers a modified copy of the model in the job worker — never in the GUI process — and this reads
the verdict off the final snapshot it streams back.

After a lowering the worker finds that lowering in its cache, so only the modified copies are
lowered again.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal

from backend_core.orchestration.jobs.spec import Job
from backend_core.common.snapshot.model import GraphSnapshot

from app.lowering.session import same_lowering
from app.runtime.qt_job import QtJob

RUNNING = "verifying"


class SuggestionVerifier(QObject):
    """Signals:
        changed(str): the verdict of this node id changed (see `verdict(node_id)`).
    """

    changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = QtJob("verification worker", "verify suggestion", self, cancel_grace_ms=0)
        self.job.event.connect(self._on_event)
        self.job.finished.connect(lambda status, row: self._on_finished(status))
        self._verdicts: dict[str, tuple[str, str]] = {}       # node id -> (verdict, text)
        self._node: str | None = None
        self._final: GraphSnapshot | None = None
        self._lowering: Job | None = None

    def verdict(self, node_id: str) -> tuple[str, str] | None:
        return self._verdicts.get(node_id)

    def is_running(self) -> bool:
        return self.job.is_running()

    def verify(self, lowering: Job, node_id: str) -> None:
        """Start the worker for the lowering's model and options (session.lowering_job), for this fallback node."""
        if self._lowering is None or not same_lowering(lowering, self._lowering):
            self._verdicts.clear()            # verdicts belong to one lowering
        self._lowering = lowering
        self._node = node_id
        self._final = None
        self._verdicts[node_id] = (RUNNING, "re-lowering a modified copy in a worker process…")
        self.changed.emit(node_id)
        self.job.start(replace(lowering, lower=replace(lowering.lower, verify_suggestions=True), steps=("lower",)))

    def cancel(self) -> None:
        self.job.cancel(graceful=False)

    def shutdown(self) -> None:
        self.job.shutdown(graceful=False)

    def reset(self) -> None:
        """A new lowering started: earlier verdicts no longer apply."""
        self.job.shutdown(graceful=False)
        self._verdicts.clear()
        self._request = None

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "stage" and data["snapshot"].kind == "final":
            self._final = data["snapshot"]

    def _on_finished(self, status: str) -> None:
        node = self._node
        if node is None:
            return
        hit = self._final.node(node) if self._final is not None else None
        fb = hit.fallback if hit else None
        if status != "done" or self._final is None:
            err = (self.job.error or {}).get("message", status)
            self._verdicts[node] = ("not verified", f"not verified: the verification run ended ({err})")
        elif fb is None:
            self._verdicts[node] = ("not verified", "not verified: the node is not a fallback of the re-run")
        elif not fb.verified:
            self._verdicts[node] = ("not verified", "not verified: the tool has no automatic change to try "
                                                    "for this fallback")
        else:
            self._verdicts[node] = (fb.verified, fb.verification)
            for other in self._final.nodes:     # one run verifies every fallback it tried
                if other.fallback is not None and other.fallback.verified and other.id != node:
                    self._verdicts[other.id] = (other.fallback.verified, other.fallback.verification)
        self.changed.emit(node)

