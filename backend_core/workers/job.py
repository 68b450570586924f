"""The job worker process: `python -m backend_core.workers.job` reads one Job (JSON) on stdin, runs
it with `run_job`, and streams backend_core.protocol lines on stdout:

  {"type": "stage", "snapshot": {...}, "planned": [...]}        each lowering stage
  {"type": "event", "kind": "step"|"status"|"line"|"run_step", "data": {...}}
  {"type": "result", "job_result": {...JobResult.to_dict()...}}
  {"type": "done", "status": "done|failed|cancelled", "exit_code": N}

The one worker every face starts (WorkerProcessExecutor, the window): a Job in, its events and its
JSON result out. SIGTERM (the caller's cancel) sets the job's cancel event, so the running step stops
and ends its own subprocesses; a second SIGTERM is not caught. Logs go to stderr."""
from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Any

from ..protocol import DONE, RESULT, emit, encode_event, error_message


def main(argv: list[str] | None = None) -> int:
    from ..execute.task import quiet_logs

    quiet_logs()
    cancel = threading.Event()

    def on_term(signum: int, frame: Any) -> None:
        cancel.set()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    signal.signal(signal.SIGTERM, on_term)
    try:
        text = sys.stdin.readline() if not argv else open(argv[0]).read()
        from ..jobs import Job, run_job

        job = Job.from_dict(json.loads(text))
    except Exception as exc:  # noqa: BLE001 - bad job JSON is a message, never a traceback
        msg = error_message(exc, "job worker")
        emit(msg)
        return msg["exit_code"]

    def on_event(kind: str, data: dict[str, Any]) -> None:
        emit(encode_event(kind, data))

    res = run_job(job, on_event, cancel)
    emit({"type": RESULT, "job_result": res.to_dict()})
    emit({"type": DONE, "status": res.status, "exit_code": res.exit_code})
    return res.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
