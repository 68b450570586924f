"""The window's one road to a Job: a Qt adapter over backend_core.orchestration.execute's WorkerProcessExecutor.

`QtJob.start(job)` submits the Job to the worker-process executor (`python -m backend_core.orchestration.workers.job`,
Job JSON on its stdin: torch never enters the GUI process) and turns the handle's events into signals on
the GUI thread; `cancel()` is what a Cancel button calls. Lowering, numerics, verification, compare,
evaluate, run on target, export and the reproducer all go through here, so the window runs exactly the
Jobs the CLI runs, and a crashed worker is a failed result with its last log lines, never a frozen window.

Cancel: graceful sends SIGTERM (the worker sets the job's cancel event, the running build or simulator
is stopped and its process group killed) and SIGKILLs the group after the grace; not graceful SIGKILLs it
at once (a lowering or the ExecuTorch import sees no SIGTERM for seconds, and leaves nothing behind)."""
from __future__ import annotations

import os
import signal
import time
import weakref
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from backend_core.orchestration.execute.worker_process import WorkerProcessExecutor, signal_group

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


class QtJob(QObject):
    """One Job at a time in the job worker.

    Signals:
        event(str, object): (kind, data) of each execute_job event, on the GUI thread: "stage" {snapshot
            (a GraphSnapshot, decoded off the GUI thread), planned}, "status" {text}, "step", "run_step",
            "progress" {phase, done, total, text}, "line" {stream, line} (the worker's log: stream "stderr").
        finished(str, object): (status, job_result): status done | failed | cancelled | error; job_result is
            JobResult.to_dict() (a refused Job or a crashed worker: status "error", its `error`), None
            when cancelled. Once per started job.
    """

    event = Signal(str, object)
    finished = Signal(str, object)
    _relay = Signal(int, str, object)          # (run, kind, data) from the executor's reader thread

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
        self.executor = WorkerProcessExecutor(env=worker_environment(), cwd=str(REPO_ROOT), stream_stderr=True)
        self.job: Any = None                       # the Job running or last run
        self.job_result: dict[str, Any] | None = None
        self.status = "idle"                       # idle | running | done | failed | cancelled | error
        self.seconds = 0.0
        self._handle: Any = None
        self._run = 0                              # events of an earlier (cancelled) run are dropped
        self._dying: list[Any] = []                # cancelled workers not reaped yet
        self._t0 = 0.0
        self._relay.connect(self._on_relay)        # queued: emitted from the reader thread

    # ------------------------------------------------------------------ control
    def start(self, job: Any) -> None:
        """Run `job` (a backend_core.orchestration.jobs.Job) in a new job worker; a running one is ended first."""
        self.shutdown(graceful=False)
        self._run += 1
        run = self._run
        self.job, self.job_result, self.status = job, None, "running"
        self._t0 = time.perf_counter()
        self.executor.env = worker_environment()    # as the window's environment is now (PATH, the cache)
        handle = self._handle = self.executor.submit(job)
        handle.add_listener(lambda kind, data: self._relay.emit(run, kind, data))
        handle.future.add_done_callback(lambda fut: self._relay.emit(run, "_result", fut))

    def cancel(self, graceful: bool = True) -> bool:
        """Stop the running job (see the module's note); False when nothing was running. Emits
        finished("cancelled", None) now: the window goes on while the worker ends."""
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
            for proc in list(self._dying):
                try:
                    proc.wait(max(0.0, deadline - time.monotonic()))
                except Exception:  # noqa: BLE001 - still running after the grace: killed below
                    signal_group(proc, signal.SIGKILL)

    def is_running(self) -> bool:
        return self.status == "running"

    def has_processes(self) -> bool:
        """True until the worker (a cancelled one too) has exited."""
        self._dying = [p for p in self._dying if p.poll() is None]
        current = self._handle.process if self._handle is not None else None
        return bool(self._dying) or (current is not None and current.poll() is None)

    def process_id(self) -> int:
        proc = self._handle.process if self._handle is not None else None
        return int(proc.pid) if proc is not None else 0

    def process_args(self) -> list[str]:
        """The running worker's command line: always the job worker, never a face's own arguments."""
        proc = self._handle.process if self._handle is not None else None
        return [str(a) for a in proc.args] if proc is not None else []

    @property
    def error(self) -> dict[str, Any] | None:
        return (self.job_result or {}).get("error")

    # ------------------------------------------------------------------ internals
    def _end(self, graceful: bool) -> None:
        handle, self._handle = self._handle, None
        self._run += 1                             # whatever the old worker still says is dropped
        if handle is None or handle.process is None:
            return
        proc = handle.process
        self._dying.append(proc)
        if graceful:
            handle.cancel()                        # SIGTERM to the group
            QTimer.singleShot(self.cancel_grace_ms, lambda p=proc: p.poll() is None and signal_group(p, signal.SIGKILL))
        else:
            handle.cancel_requested = True
            signal_group(proc, signal.SIGKILL)
            try:
                proc.wait(2)                       # SIGKILL ends it within milliseconds: nothing left behind
            except Exception:  # noqa: BLE001 - a process stuck in the kernel: reaped when it ends
                pass

    def _on_relay(self, run: int, kind: str, data: Any) -> None:
        if run != self._run:
            return
        if kind != "_result":
            self.event.emit(kind, data)
            return
        self.seconds = time.perf_counter() - self._t0
        try:
            row = data.result().to_dict()
        except Exception as exc:  # noqa: BLE001 - the executor's own failure: a result, never a frozen window
            row = {"status": "failed", "exit_code": 3, "steps": {}, "files": {},
                   "error": {"step": "worker", "message": f"{type(exc).__name__}: {exc}", "hint": "", "detail": "",
                             "exit_code": 3}}
        crashed = (row.get("error") or {}).get("type") in ("WorkerDied", "BadJob")
        self.job_result = row
        self.status = "error" if crashed else str(row.get("status") or "failed")
        self._handle = None
        self.finished.emit(self.status, row)
