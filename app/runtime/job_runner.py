"""A `backend_core.jobs.Job` run in the job worker process, for the window: the one road of every window
action that is a Job (a target run, an export).

`JobRunner.start(job)` sends the Job as one line of JSON on the stdin of `python -m
backend_core.workers.job` (through WorkerJob: the one worker state machine; torch stays out of the GUI
process) and turns the worker's protocol lines back into the job's events (`event(kind, data)`: "step",
"status", "line", "run_step", as `run_job`'s on_event gives them; stage snapshots are not decoded) and,
at the end, its `job_result` (JobResult.to_dict(): each step's section, `error` with its step,
`exit_code`, `files`).

Cancel sends SIGTERM: the worker sets the job's cancel event, the running build or simulator is stopped
and its process group killed (backend_core.toolchain.process), the worker exits; SIGKILL follows after
`cancel_grace_ms` if it has not (its direct children die with it: PR_SET_PDEATHSIG)."""
from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core import protocol

from .jobs import WorkerJob

# The worker's own stop takes at most ~7 s (firmware.process: SIGTERM the group, SIGKILL after 2 s,
# wait 5 s); only then is the worker itself killed.
CANCEL_GRACE_MS = 10_000


class JobRunner(QObject):
    """One Job at a time in the job worker.

    Signals:
        event(str, object): (kind, data) of each run_job event but "stage"; the worker's own log lines
            come as ("line", {"stream": "stderr", "line": ...}).
        finished(str, object): (status, job_result): status done | failed | cancelled | error; job_result
            is JobResult.to_dict() (for a refused Job or a crashed worker: status failed, its `error`),
            None when cancelled.
    """

    event = Signal(str, object)
    finished = Signal(str, object)

    def __init__(self, name: str = "job worker", stage: str = "job", parent: QObject | None = None,
                 cancel_grace_ms: int = CANCEL_GRACE_MS) -> None:
        super().__init__(parent)
        self.job: Any = None                     # the Job running or last run
        self.job_result: dict[str, Any] | None = None
        self.cancel_grace_ms = cancel_grace_ms
        self.worker = WorkerJob(name, {"stage": stage}, crash_stage=lambda: stage, parent=self)
        self.worker.message.connect(self._on_message)
        self.worker.logLine.connect(lambda text: self.event.emit("line", {"stream": "stderr", "line": text}))
        self.worker.finished.connect(self._on_finished)

    def start(self, job: Any) -> None:
        """Run `job` (a backend_core.jobs.Job) in a new job worker; a running one is cancelled first."""
        self.job, self.job_result = job, None
        self.worker.start(["-m", protocol.JOB_WORKER], (json.dumps(job.to_dict()) + "\n").encode())

    def cancel(self, graceful: bool = True) -> bool:
        """SIGTERM the worker (SIGKILL after the grace), or SIGKILL it now (`graceful=False`: when it
        runs no build, so nothing of it could be orphaned: a lowering or the ExecuTorch import does not
        see SIGTERM for seconds). False when nothing was running."""
        return self.worker.cancel(self.cancel_grace_ms if graceful else 0)

    def shutdown(self, graceful: bool = True) -> None:
        """Window closing: the same cancel; a graceful one then waits for the worker to end its build or
        simulator (at most the grace and a second): when the window goes, Qt kills what is left."""
        if not self.worker.has_processes():
            return
        self.worker.shutdown(self.cancel_grace_ms if graceful else 0)
        if graceful:
            self.worker.client.wait_for_exit(self.cancel_grace_ms + 1000)

    def is_running(self) -> bool:
        return self.worker.is_running()

    def has_processes(self) -> bool:
        """True until the worker (a cancelled one too) has exited and been reaped."""
        return self.worker.has_processes()

    def process_id(self) -> int:
        return self.worker.process_id()

    def _on_message(self, msg: dict) -> None:
        t = msg.get("type")
        if t == protocol.RESULT and "job_result" in msg:
            self.job_result = msg["job_result"]
        elif t == protocol.ERROR:                     # the Job JSON was refused (bad input)
            self.job_result = _failed("job", msg.get("message", ""), msg.get("hint", ""), msg.get("detail", ""),
                                      int(msg.get("exit_code") or 2))
        elif t == protocol.EVENT:
            event = protocol.decode_event(msg)
            if event is not None:
                self.event.emit(event[0], event[1])

    def _on_finished(self, status: str) -> None:
        if status == "error" and self.job_result is None:        # crashed or could not start
            err = self.worker.error or {}
            self.job_result = _failed("worker", err.get("message", "the job worker failed"), err.get("hint", ""),
                                      err.get("traceback", ""), 3)
        self.finished.emit(status, None if status == "cancelled" else self.job_result)


def _failed(step: str, message: str, hint: str, detail: str, code: int) -> dict[str, Any]:
    return {"status": "failed", "exit_code": code, "steps": {}, "files": {},
            "error": {"step": step, "message": message, "hint": hint, "detail": detail, "exit_code": code}}
