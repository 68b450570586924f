"""Verify a fallback's suggested change: the lowering worker re-lowers a modified copy of the
model (`--verify-suggestions`) in its own process — never in the GUI process — and this reads
the verdict off the final snapshot it streams back.

After a lowering the worker finds that lowering in its cache, so only the modified copies are
lowered again.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from backend_core import protocol
from backend_core.snapshot.model import GraphSnapshot, snapshot_from_dict

from app.lowering.session import LowerRequest
from app.runtime.jobs import WorkerJob

RUNNING = "verifying"


class SuggestionVerifier(QObject):
    """Signals:
        changed(str): the verdict of this node id changed (see `verdict(node_id)`).
    """

    changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = WorkerJob("verification worker", {"stage": "verify suggestion"}, parent=self)
        self.job.message.connect(self._on_message)
        self.job.finished.connect(self._on_finished)
        self._verdicts: dict[str, tuple[str, str]] = {}       # node id -> (verdict, text)
        self._node: str | None = None
        self._final: GraphSnapshot | None = None
        self._request: LowerRequest | None = None

    def verdict(self, node_id: str) -> tuple[str, str] | None:
        return self._verdicts.get(node_id)

    def is_running(self) -> bool:
        return self.job.is_running()

    def verify(self, request: LowerRequest, node_id: str) -> None:
        """Start the worker for the request's model and options, for this fallback node."""
        if request != self._request:
            self._verdicts.clear()            # verdicts belong to one lowering
        self._request = request
        self._node = node_id
        self._final = None
        self._verdicts[node_id] = (RUNNING, "re-lowering a modified copy in a worker process…")
        self.changed.emit(node_id)
        self.job.start(protocol.lowering_worker_arguments(
            request.source, request.target, request.flow, request.calib,
            channels_last=request.channels_last, verify_suggestions=True))

    def cancel(self) -> None:
        self.job.cancel()

    def shutdown(self) -> None:
        self.job.shutdown()

    def reset(self) -> None:
        """A new lowering started: earlier verdicts no longer apply."""
        self.job.shutdown()
        self._verdicts.clear()
        self._request = None

    def _on_message(self, msg: dict) -> None:
        if msg.get("type") == protocol.STAGE and msg["snapshot"].get("kind") == "final":
            self._final = snapshot_from_dict(msg["snapshot"])

    def _on_finished(self, status: str) -> None:
        node = self._node
        if node is None:
            return
        fb = self._final.node(node).fallback if self._final is not None and self._final.node(node) else None
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

