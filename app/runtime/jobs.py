"""The one state machine of a worker-process job (lowering, numerics, artefact reading).

A job starts a `backend_core.workers.*` process through WorkerClient, forwards its protocol
messages, and ends exactly once with `finished(status)`: done | failed | cancelled | error. The
ways a job can go wrong are the same for every worker, so they are handled here once: the worker
reports an error, exits without its `done` line (a crash in user code, OOM, a kill), or cannot be
started at all. Owners (LoweringSession, NumericsPanel) add only what their messages mean.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from backend_core import protocol

from .worker_client import WorkerClient

STDERR_TAIL = 40


class WorkerJob(QObject):
    """Signals:
        message(dict): every protocol message of the worker, as it arrives (error/done included).
        logLine(str): one line of the worker's stderr.
        errorRaised(dict): stage, node, message, hint, traceback (+ title/note from `context`).
        finished(str): done | failed | cancelled | error — once per job.
    """

    message = Signal(object)
    logLine = Signal(str)
    errorRaised = Signal(object)
    finished = Signal(str)

    def __init__(self, worker_name: str, context: dict[str, Any] | None = None,
                 crash_stage: Callable[[], str] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker_name = worker_name             # "lowering worker", "numerics worker"
        self.context = dict(context or {})         # stage/title/note put on every error dict
        self._crash_stage = crash_stage or (lambda: self.context.get("stage", "worker"))
        self.client = WorkerClient(self)
        self.client.message.connect(self._on_message)
        self.client.stderrLine.connect(self._on_stderr)
        self.client.exited.connect(self._on_exited)
        self.client.failedToStart.connect(self._on_failed_to_start)
        self.status = "idle"
        self.error: dict[str, Any] | None = None
        self.seconds = 0.0
        self.stderr_tail: list[str] = []
        self._got_done = False
        self._t0 = 0.0

    # ------------------------------------------------------------------ control
    def start(self, args: list[str], stdin: bytes | None = None) -> None:
        """Start the worker (a running job is cancelled silently first); `stdin`: WorkerClient.start."""
        self.client.cancel()
        self.status = "running"
        self.error = None
        self.seconds = 0.0
        self.stderr_tail = []
        self._got_done = False
        self._t0 = time.perf_counter()
        self.client.start(args, stdin)

    def cancel(self, grace_ms: int = 0) -> bool:
        """Kill the worker (`grace_ms`: WorkerClient.cancel); returns whether a running job was
        cancelled (then finished('cancelled'))."""
        if self.status != "running":
            return False
        self.client.cancel(grace_ms)
        self.status = "cancelled"
        self.finished.emit("cancelled")
        return True

    def shutdown(self, grace_ms: int = 0) -> None:
        """Window closing: kill without signalling anyone (the job is no longer running)."""
        self.client.cancel(grace_ms)
        if self.status == "running":
            self.status = "cancelled"

    def is_running(self) -> bool:
        return self.status == "running"

    def has_processes(self) -> bool:
        return self.client.has_processes()

    def process_id(self) -> int:
        return self.client.process_id()

    # ------------------------------------------------------------------ errors
    def raise_error(self, message: str, hint: str = "", traceback: str = "", *, stage: str | None = None,
                    node: str | None = None) -> None:
        """Record and signal an error dict (the error panel's format)."""
        self.error = {**self.context, "stage": stage or self.context.get("stage", "worker"), "node": node,
                      "message": message, "hint": hint, "traceback": traceback}
        self.errorRaised.emit(self.error)

    # ------------------------------------------------------------------ stream
    def _on_message(self, msg: dict) -> None:
        t = msg.get("type")
        if t == protocol.DONE:
            self._got_done = True
            self.seconds = float(msg.get("seconds") or time.perf_counter() - self._t0)
            if self.status == "running":
                self.status = str(msg.get("status", "done"))
        elif t == protocol.ERROR:
            self._got_done = True               # a bad-input error is the worker's last word
            if self.status == "running":
                self.status = "error"
        self.message.emit(msg)
        if t == protocol.ERROR:
            self.raise_error(str(msg.get("message", "")), str(msg.get("hint") or ""),
                             str(msg.get("detail") or ""), stage=msg.get("stage"))

    def _on_stderr(self, line: str) -> None:
        if not line.strip():
            return
        self.stderr_tail = (self.stderr_tail + [line])[-STDERR_TAIL:]
        self.logLine.emit(line)

    def _on_exited(self, code: int, cancelled: bool) -> None:
        if cancelled or self.status == "cancelled":
            return
        if not self._got_done:
            self.status = "error"
            self.raise_error(f"The {self.worker_name} exited with code {code} without a result.",
                             "Its last log lines are under Traceback.", "\n".join(self.stderr_tail),
                             stage=self._crash_stage())
        if self.status == "running":          # `done` arrived without a status: treat as done
            self.status = "done"
        self.finished.emit(self.status)

    def _on_failed_to_start(self, message: str) -> None:
        self.status = "error"
        self.raise_error(f"Could not start the {self.worker_name}: {message}",
                         "Check the Python environment (make setup).", stage="worker")
        self.finished.emit(self.status)
