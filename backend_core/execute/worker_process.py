"""Each job in a fresh worker process: `python -m backend_core.workers.job`, Job JSON on its stdin,
backend_core.protocol lines back (events, then the result). What the window does with QProcess, for
Python callers: torch stays out of the caller, a crash of user code or of ExecuTorch is a failed
result, and cancel ends the process at once."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any

from ..jobs import Job, JobResult
from ..jobs.result import CANCELLED
from ..protocol import JOB_WORKER, decode_event, parse_line
from .api import EventCallback, ExecutorBase, JobHandle
from .task import crash_result


class WorkerProcessExecutor(ExecutorBase):
    def __init__(self, python: str | None = None, env: dict[str, str] | None = None) -> None:
        self.python = python or sys.executable
        self.env = env
        self._procs: list[subprocess.Popen] = []

    def describe(self) -> str:
        return "a worker process per job"

    def submit(self, job: Job, on_event: EventCallback | None = None) -> JobHandle:
        proc = subprocess.Popen([self.python, "-m", JOB_WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env, start_new_session=True)
        self._procs.append(proc)
        handle = JobHandle(job, lambda: _end(proc))
        if on_event is not None:
            handle.add_listener(on_event)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(job.to_dict()) + "\n")
        proc.stdin.close()
        threading.Thread(target=_read, args=(proc, handle), daemon=True).start()
        return handle

    def close(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                _end(p)
            p.wait()
        self._procs.clear()


def _end(proc: subprocess.Popen) -> None:
    """End the worker and whatever it started (cmake, QEMU): it leads its own process group."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def _read(proc: subprocess.Popen, handle: JobHandle) -> None:
    assert proc.stdout is not None and proc.stderr is not None
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True).start()   # never block on a full pipe
    result: dict[str, Any] | None = None
    for line in proc.stdout:
        msg = parse_line(line)
        if msg is None:
            continue
        if msg["type"] == "result" and "job_result" in msg:
            result = msg["job_result"]
        else:
            event = decode_event(msg)
            if event is not None:
                handle.emit(*event)
    code = proc.wait()
    if result is not None:
        handle.set_result(JobResult.from_dict(result))
        return
    job = handle.job.to_dict()
    if handle.cancel_requested:
        res = JobResult.from_dict(crash_result(job, "cancelled", kind="Cancelled"))
        res.status, res.error = CANCELLED, {**(res.error or {}), "exit_code": 130}
        handle.set_result(res)
        return
    tail = "".join(errors[-30:])
    handle.set_result(JobResult.from_dict(crash_result(
        job, f"the worker process ended (exit status {code}) without a result", tail, kind="WorkerDied")))
