"""The functions a sweep ships to its workers (a local process or a Dask worker): plain data in, plain
data out, so either executor runs them unchanged."""
from __future__ import annotations

import os
import platform
import shutil
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
    from ..jobs import Job, run_job

    job = Job.from_dict(job_dict)
    try:
        return run_job(job).to_dict()
    except Exception as exc:  # noqa: BLE001  an unforeseen crash is a row with its traceback
        return crash_result(job_dict, f"{type(exc).__name__}: {exc}", traceback.format_exc())


def crash_result(job_dict: dict[str, Any], message: str, detail: str = "", *, kind: str = "Crash") -> dict[str, Any]:
    """A result row for a job that produced none (it crashed, or its worker died)."""
    return {"format": 1, "job": job_dict, "status": "failed", "exit_code": 3, "steps": {},
            "error": {"step": None, "type": kind, "message": message, "hint": "", "detail": detail,
                      "exit_code": 3},
            "timings_s": {}, "files": {}, "host": socket.gethostname(),
            "summary": {"status": "failed", "error": message}}


def check_worker(steps: list[str], et_root: str | None = None) -> dict[str, Any]:
    """What this worker can run: the product and ExecuTorch import, and for run steps the toolchain,
    QEMU and the checkout. `problems` names each missing piece with its fix."""
    problems: list[str] = []
    info: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(), "python": platform.python_version()}
    try:
        from importlib.metadata import version

        info["executorch"] = version("executorch")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"executorch is not installed ({exc}): pip install cortexm-lens")
    if "run" in steps or "profile" in steps:
        for tool, pkg in (("arm-none-eabi-gcc", "gcc-arm-none-eabi"), ("cmake", "cmake"), ("ninja", "ninja-build"),
                          ("qemu-system-arm", "qemu-system-arm")):
            if shutil.which(tool) is None:
                problems.append(f"{tool} not found: apt-get install {pkg}")
        root = et_root or os.environ.get("EXECUTORCH_ROOT")
        if not root:
            problems.append("no ExecuTorch checkout: pass --et-root (the same path on every worker) or set "
                            "EXECUTORCH_ROOT in the worker's environment")
        else:
            from ..errors import CmlensError
            from ..firmware.checkout import inspect_checkout

            try:
                inspect_checkout(root).require_buildable()
            except CmlensError as exc:
                problems.append(f"checkout {root}: {exc.message}")
    info["problems"] = problems
    return info
