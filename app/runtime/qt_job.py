"""The window's one road to a Job: a Qt adapter over backend_core.orchestration.execute's Executors.

`QtExecutor.submit(job)` wraps any Executor (the worker-process one by default) and gives one `QtHandle` per
job: its events and its end as signals on the GUI thread, its cancel (graceful or at once) through
`JobHandle.cancel(force=...)`, never through the process. `QtJob` is the one-job-at-a-time slot most views
use. `QtJob.start(job)` submits the Job to the worker-process executor (`python -m backend_core.orchestration.workers.job`,
Job JSON on its stdin: torch never enters the GUI process) and turns the handle's events into signals on
the GUI thread; `cancel()` is what a Cancel button calls. Lowering, numerics, verification, compare,
evaluate, run on target, export and the reproducer all go through here, so the window runs exactly the
Jobs the CLI runs, and a crashed worker is a failed result with its last log lines, never a frozen window.

Cancel: graceful sends SIGTERM (the worker sets the job's cancel event, the running build or simulator
is stopped and its process group killed) and SIGKILLs the group after the grace; not graceful SIGKILLs it
at once (a lowering or the ExecuTorch import sees no SIGTERM for seconds, and leaves nothing behind)."""
from __future__ import annotations

import os
import time
import weakref
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from backend_core.orchestration.execute.api import Executor, JobHandle
from backend_core.orchestration.execute.worker_process import WorkerProcessExecutor

REPO_ROOT = Path(__file__).resolve().parents[2]
# The worker's own stop takes at most ~7 s (toolchain.process: SIGTERM the group, SIGKILL after 2 s, wait
# 5 s); only then is the worker itself killed.
CANCEL_GRACE_MS = 10_000


def worker_environment() -> dict[str, str]:
    """The job worker's environment: this checkout first on the path, output unbuffered."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _failed_row(exc: Exception) -> dict[str, Any]:
    """The executor's own failure as a result: never a frozen window."""
    return {"status": "failed", "exit_code": 3, "steps": {}, "files": {},
            "error": {"step": "worker", "message": f"{type(exc).__name__}: {exc}", "hint": "", "detail": "",
                      "exit_code": 3}}


class QtHandle(QObject):
    """One submitted Job, on the GUI thread.

    Signals:
        event(str, object): (kind, data) of each execute_job event: "stage" {snapshot (a GraphSnapshot,
            decoded off the GUI thread), planned}, "status" {text}, "step", "run_step", "progress", "line".
        finished(str, object): (status, job_result) once: status done | failed | cancelled | error; job_result
            is JobResult.to_dict() (a refused Job or a crashed worker: status "error"), None when cancelled.
    """

    event = Signal(str, object)  # type: ignore[assignment]  # shadows QObject.event(QEvent) by name, as PySide6 allows
    finished = Signal(str, object)
    _relay = Signal(str, object)               # from the executor's reader thread: queued

    def __init__(self, handle: JobHandle, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.handle, self.job = handle, handle.job
        self.status, self.job_result, self.seconds = "running", None, 0.0
        self._t0 = time.perf_counter()
        self._relay.connect(self._on_relay)
        handle.add_listener(lambda kind, data: self._relay.emit(kind, data))
        handle.future.add_done_callback(lambda fut: self._relay.emit("_result", fut))

    def cancel(self, graceful: bool = True, grace_ms: int = 10_000) -> bool:
        """Stop the job; False when it had ended. Graceful: the worker stops its build or simulator, and
        is killed after `grace_ms`; else killed at once. Emits finished("cancelled", None) now."""
        if self.status != "running":
            return False
        self.status = "cancelled"
        if graceful:
            self.handle.cancel()
            QTimer.singleShot(grace_ms, lambda h=self.handle: h.alive() and h.cancel(force=True))
        else:
            self.handle.cancel(force=True)
        self.finished.emit("cancelled", None)
        return True

    def alive(self) -> bool:
        """True until nothing of the job runs any more (a cancelled worker too)."""
        return self.handle.alive()

    def _on_relay(self, kind: str, data: Any) -> None:
        if self.status == "cancelled":
            return
        if kind != "_result":
            self.event.emit(kind, data)
            return
        self.seconds = time.perf_counter() - self._t0
        try:
            row = data.result().to_dict()
        except Exception as exc:  # noqa: BLE001 - the executor's own failure: a result, never a frozen window
            row = _failed_row(exc)
        crashed = (row.get("error") or {}).get("type") in ("WorkerDied", "BadJob")
        self.job_result = row
        self.status = "error" if crashed else str(row.get("status") or "failed")
        self.finished.emit(self.status, row)


class QtExecutor(QObject):
    """Any Executor, its handles as QtHandles. Default: a worker process per job, this checkout first on
    its path (the GUI never imports torch). Jobs submitted together run together (the compare's sides)."""

    def __init__(self, executor: Executor | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.executor = executor or WorkerProcessExecutor(env=worker_environment(), cwd=str(REPO_ROOT),
                                                          stream_stderr=True)

    def submit(self, job: Any) -> QtHandle:
        if isinstance(self.executor, WorkerProcessExecutor):
            self.executor.env = worker_environment()    # as the window's environment is now (PATH, the cache)
        return QtHandle(self.executor.submit(job), self)


class QtJob(QObject):
    """One Job at a time (a new start ends the running one), on a QtExecutor: the slot a view holds.

    Signals: event(str, object) and finished(str, object) of the current job (see QtHandle).
    Cancel: graceful sends SIGTERM and kills the worker after the grace; not graceful kills it at once."""

    event = Signal(str, object)  # type: ignore[assignment]  # shadows QObject.event(QEvent) by name, as PySide6 allows
    finished = Signal(str, object)

    _instances: "weakref.WeakSet[QtJob]" = weakref.WeakSet()

    @classmethod
    def instances(cls) -> list["QtJob"]:
        """Every live adapter (tests check that none left a process behind)."""
        return list(cls._instances)

    def __init__(self, name: str = "job worker", stage: str = "job", parent: QObject | None = None,
                 cancel_grace_ms: int = CANCEL_GRACE_MS) -> None:
        super().__init__(parent)
        QtJob._instances.add(self)
        self.name, self.stage = name, stage
        self.cancel_grace_ms = cancel_grace_ms
        self.executor = QtExecutor(parent=self)
        self.job: Any = None                       # the Job running or last run
        self.job_result: dict[str, Any] | None = None
        self.status = "idle"                       # idle | running | done | failed | cancelled | error
        self.seconds = 0.0
        self._current: QtHandle | None = None
        self._ended: list[QtHandle] = []           # cancelled jobs whose worker may not have exited yet

    def start(self, job: Any) -> None:
        """Run `job` (a backend_core.orchestration.jobs.Job); a running one is ended first."""
        self.shutdown(graceful=False)
        self.job, self.job_result, self.status = job, None, "running"
        h = self._current = self.executor.submit(job)
        def relay(kind: str, data: Any, h: Any = h) -> None:
            if h is self._current:
                self.event.emit(kind, data)

        h.event.connect(relay)
        h.finished.connect(lambda status, row, h=h: self._on_finished(h, status, row))

    def cancel(self, graceful: bool = True) -> bool:
        """Stop the running job; False when nothing was running. Emits finished("cancelled", None) now:
        the window goes on while the worker ends."""
        if self.status != "running":
            return False
        self._end(graceful)
        self.status = "cancelled"
        self.finished.emit("cancelled", None)
        return True

    def shutdown(self, graceful: bool = True) -> None:
        """Window closing or a new job: end the worker without a signal to anyone; a graceful one waits
        for the worker to stop its build or simulator (at most the grace and a second)."""
        if self.status == "running":
            self._end(graceful)
            self.status = "cancelled"
        if graceful:
            deadline = time.monotonic() + (self.cancel_grace_ms + 1000) / 1000
            for h in list(self._ended):
                if not h.handle.wait_exit(max(0.0, deadline - time.monotonic())):
                    h.handle.cancel(force=True)     # still running after the grace

    def is_running(self) -> bool:
        return self.status == "running"

    def has_processes(self) -> bool:
        """True until the worker (a cancelled one too) has exited."""
        self._ended = [h for h in self._ended if h.alive()]
        return bool(self._ended) or (self._current is not None and self._current.alive())

    def process_id(self) -> int:
        return self._current.handle.pid() if self._current is not None else 0

    def process_args(self) -> list[str]:
        """The running worker's command line: always the job worker, never a face's own arguments."""
        return self._current.handle.command() if self._current is not None else []

    @property
    def error(self) -> dict[str, Any] | None:
        return (self.job_result or {}).get("error")

    def _end(self, graceful: bool) -> None:
        h, self._current = self._current, None
        if h is None:
            return
        self._ended.append(h)
        h.finished.disconnect()
        h.event.disconnect()
        h.cancel(graceful, self.cancel_grace_ms)

    def _on_finished(self, h: QtHandle, status: str, row: dict[str, Any] | None) -> None:
        if h is not self._current:
            return
        self.seconds = h.seconds
        self.job_result = row
        self.status = status
        self._current = None
        h.deleteLater()
        self.finished.emit(status, row)
