"""The job worker process: `python -m backend_core.orchestration.workers.job` reads one Job (JSON) on stdin, runs
it with `execute_job`, and streams backend_core.common.protocol lines on stdout:

  {"type": "stage", "snapshot": {...}, "planned": [...]}        each lowering stage
  {"type": "event", "kind": "step"|"status"|"line"|"run_step"|"progress", "data": {...}}
  {"type": "result", "job_result": {...JobResult.to_dict()...}}
  {"type": "done", "status": "done|failed|cancelled", "exit_code": N}
  {"type": "error", ...}                                         the Job JSON itself was refused

The one worker process of the product: every face that runs a Job out of its own process (the window,
WorkerProcessExecutor) starts this and nothing else; it reads a Job and no arguments. SIGTERM (the
caller's cancel) sets the job's cancel event, so the running step stops and ends its own subprocesses;
a second SIGTERM is not caught. Progress events are throttled to about ten a second. Logs go to stderr."""
from __future__ import annotations

import json
import signal
import sys
import threading
import time
from typing import Any

from backend_core.common.protocol import DONE, RESULT, emit, encode_event, error_message

PROGRESS_INTERVAL_S = 0.1


def main(argv: list[str] | None = None) -> int:
    from backend_core.orchestration.execute.task import quiet_logs

    quiet_logs()
    cancel = threading.Event()

    def on_term(signum: int, frame: Any) -> None:
        cancel.set()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    signal.signal(signal.SIGTERM, on_term)
    try:
        text = sys.stdin.readline() if not argv else open(argv[0]).read()
        from backend_core.orchestration.jobs import Job, execute_job

        job = Job.from_dict(json.loads(text))
    except Exception as exc:  # noqa: BLE001 - bad job JSON is a message, never a traceback
        msg = error_message(exc, "job worker")
        emit(msg)
        return msg["exit_code"]
    last_progress = [0.0]

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "progress" and data.get("done", 0) < data.get("total", 0):
            now = time.monotonic()
            if now - last_progress[0] < PROGRESS_INTERVAL_S:
                return
            last_progress[0] = now
        emit(encode_event(kind, data))

    res = execute_job(job, on_event, cancel)
    if (res.steps.get("lower") or {}).get("status") == "done" and "torch" in sys.modules:
        from backend_core.lowering.artefacts.schemas import ensure_table

        ensure_table()          # once per installed stack: a .pte opened later needs no torch import
    emit({"type": RESULT, "job_result": res.to_dict()})
    emit({"type": DONE, "status": res.status, "exit_code": res.exit_code})
    return res.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
