"""Each job in a fresh worker process: `python -m backend_core.orchestration.workers.job`, Job JSON on its stdin,
backend_core.common.protocol lines back (events, then the result). The window's road (through its Qt adapter,
app/runtime/qt_job.py) and Python callers': torch stays out of the caller, a crash of user code or of
ExecuTorch is a failed result, and cancel ends the process (SIGTERM: the job stops its build or simulator
and exits; `kill` ends the whole process group at once)."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any, cast

from backend_core.orchestration.jobs import Job, JobResult
from backend_core.orchestration.jobs.result import CANCELLED
from backend_core.common.protocol import ERROR, JOB_WORKER, LineSplitter, decode_event, parse_line
from backend_core.orchestration.execute.api import EventCallback, ExecutorBase, JobHandle
from backend_core.orchestration.execute.task import crash_result


class WorkerProcessExecutor(ExecutorBase):
    """`env`/`cwd`: the worker's environment and folder (the window puts its checkout on PYTHONPATH);
    `stream_stderr`: each line the worker logs becomes a ("line", {"stream": "stderr", ...}) event (the
    window's pipeline log), else only the last lines are kept for a crash's message."""

    def __init__(self, python: str | None = None, env: dict[str, str] | None = None, cwd: str | None = None,
                 stream_stderr: bool = False) -> None:
        self.python = python or sys.executable
        self.env = env
        self.cwd = cwd
        self.stream_stderr = stream_stderr
        self._procs: list[subprocess.Popen] = []

    def describe(self) -> str:
        return "a worker process per job"

    def submit(self, job: Job, on_event: EventCallback | None = None) -> JobHandle:
        proc = subprocess.Popen([self.python, "-m", JOB_WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env, cwd=self.cwd, start_new_session=True)
        self._procs = [p for p in self._procs if p.poll() is None] + [proc]
        handle = ProcessJobHandle(job, proc)
        if on_event is not None:
            handle.add_listener(on_event)
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(job.to_dict()) + "\n").encode())
        proc.stdin.close()
        threading.Thread(target=_read, args=(proc, handle, self.stream_stderr), daemon=True,
                         name=f"cmlens-worker-{proc.pid}").start()
        return handle

    def close(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                signal_group(p, signal.SIGTERM)
            p.wait()
        self._procs.clear()


class ProcessJobHandle(JobHandle):
    """A job in its own worker process: cancel() is SIGTERM (the job stops its build or simulator and
    exits), cancel(force=True) SIGKILLs the whole group at once (a lowering or the ExecuTorch import sees
    no SIGTERM for seconds, and leaves nothing behind)."""

    def __init__(self, job: Job, proc: subprocess.Popen) -> None:
        super().__init__(job, lambda: signal_group(proc, signal.SIGTERM))
        self._proc = proc

    def cancel(self, force: bool = False) -> None:
        if not force:
            super().cancel()
            return
        self.cancel_requested = True
        signal_group(self._proc, signal.SIGKILL)
        try:
            self._proc.wait(2)                     # SIGKILL ends it within milliseconds
        except subprocess.TimeoutExpired:          # a process stuck in the kernel: reaped when it ends
            pass

    def alive(self) -> bool:
        return self._proc.poll() is None

    def wait_exit(self, timeout: float | None = None) -> bool:
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def pid(self) -> int:
        return int(self._proc.pid)

    def command(self) -> list[str]:
        return [str(a) for a in cast(list[Any], self._proc.args)]      # started with an argument list


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Signal the worker and whatever it started (cmake, QEMU): it leads its own process group."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _read(proc: subprocess.Popen, handle: JobHandle, stream_stderr: bool) -> None:
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = cast(io.BufferedReader, proc.stdout), cast(io.BufferedReader, proc.stderr)    # bufsize=-1
    errors: list[str] = []

    def read_stderr() -> None:                  # never block on a full pipe
        splitter = LineSplitter()
        for chunk in iter(lambda: stderr.read1(65536), b""):
            for line in splitter.feed(chunk):
                errors.append(line)
                del errors[:-40]
                if stream_stderr and line.strip():
                    handle.emit("line", {"stream": "stderr", "line": line.rstrip()})

    err_thread = threading.Thread(target=read_stderr, daemon=True)
    err_thread.start()
    result: dict[str, Any] | None = None
    refused: dict[str, Any] | None = None
    splitter = LineSplitter()
    for chunk in iter(lambda: stdout.read1(1 << 20), b""):
        for line in splitter.feed(chunk):
            msg = parse_line(line)
            if msg is None:
                if line.strip():             # a stray print() of user code: a log line, never lost
                    handle.emit("line", {"stream": "stdout", "line": line.rstrip()})
                continue
            if msg["type"] == "result" and "job_result" in msg:
                result = msg["job_result"]
            elif msg["type"] == ERROR:       # the worker refused the Job itself (bad JSON): its message
                refused = msg
            else:
                event = decode_event(msg)
                if event is not None:
                    handle.emit(*event)
    code = proc.wait()
    err_thread.join(timeout=5)
    if result is not None:
        handle.set_result(JobResult.from_dict(result))
        return
    job = handle.job.to_dict()
    if handle.cancel_requested:
        res = JobResult.from_dict(crash_result(job, "cancelled", kind="Cancelled"))
        res.status, res.error = CANCELLED, {**(res.error or {}), "exit_code": 130}
        handle.set_result(res)
        return
    if refused is not None:
        row = crash_result(job, str(refused.get("message", "")), str(refused.get("detail") or ""), kind="BadJob")
        row["error"].update(hint=str(refused.get("hint") or ""), exit_code=int(refused.get("exit_code") or 2))
        row["exit_code"] = row["error"]["exit_code"]
        handle.set_result(JobResult.from_dict(row))
        return
    tail = "\n".join(errors[-30:])
    handle.set_result(JobResult.from_dict(crash_result(
        job, f"the worker process ended (exit status {code}) without a result", tail, kind="WorkerDied")))
