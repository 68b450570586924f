"""The functions an executor ships to its workers (a local process or a Dask worker): plain data in, plain
data out, so either executor runs them unchanged."""
from __future__ import annotations

import os
import socket
import traceback
from typing import Any


def quiet_logs() -> None:
    import logging

    for name in ("", "torch", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    os.environ.setdefault("TORCH_LOGS", "-all")


def share_cores(processes: int) -> int:
    """Give this worker process its share of the machine's cores for torch's intra-op threads: N worker
    processes that each spin up one thread per core oversubscribe the machine (OpenMP threads busy-wait),
    and a sweep's jobs are parallel across processes already. Returns the thread count set."""
    threads = max(1, (os.cpu_count() or 1) // max(1, processes))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    return threads


def run_task(job_dict: dict[str, Any]) -> dict[str, Any]:
    """Run one job; anything it raises becomes a result with the error, never a lost row."""
    quiet_logs()
    from backend_core.orchestration.jobs import Job, execute_job

    job = Job.from_dict(job_dict)
    try:
        return execute_job(job).to_dict()
    except Exception as exc:  # noqa: BLE001  an unforeseen crash is a row with its traceback
        return crash_result(job_dict, f"{type(exc).__name__}: {exc}", traceback.format_exc())


def crash_result(job_dict: dict[str, Any], message: str, detail: str = "", *, kind: str = "Crash") -> dict[str, Any]:
    """A result row for a job that produced none (it crashed, or its worker died)."""
    return {"format": 1, "job": job_dict, "status": "failed", "exit_code": 3, "steps": {},
            "error": {"step": None, "type": kind, "message": message, "hint": "", "detail": detail,
                      "exit_code": 3},
            "timings_s": {}, "files": {}, "host": socket.gethostname(),
            "summary": {"status": "failed", "error": message}}
