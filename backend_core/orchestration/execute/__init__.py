"""Where jobs run: one `Executor` interface (learnt from dask.distributed's `Client`) with four
implementations — in this process (the CLI, tests), a worker subprocess speaking backend_core.common.protocol
(the window: torch never enters the GUI process), a local process pool and a Dask cluster (sweeps).

    with executor_for(...) as ex:
        handle = ex.submit(job, on_event=print_event)
        result = handle.result()            # a JobResult; handle.cancel() stops it
        for h in as_completed(ex.map(jobs)): ...
"""
from __future__ import annotations

from backend_core.orchestration.execute.api import Executor, JobHandle, as_completed
from backend_core.orchestration.execute.choose import open_executor
from backend_core.orchestration.execute.inprocess import InProcessExecutor
from backend_core.orchestration.execute.worker_process import WorkerProcessExecutor

__all__ = ["Executor", "JobHandle", "as_completed", "InProcessExecutor", "WorkerProcessExecutor",
           "LocalPoolExecutor", "DaskExecutor", "run_in_process", "open_executor"]


def __getattr__(name: str):  # the pool and Dask import multiprocessing / distributed lazily
    if name == "LocalPoolExecutor":
        from backend_core.orchestration.execute.pool import LocalPoolExecutor
        return LocalPoolExecutor
    if name == "DaskExecutor":
        from backend_core.orchestration.execute.dask import DaskExecutor
        return DaskExecutor
    if name == "run_in_process":
        from backend_core.orchestration.execute.inprocess import run_in_process
        return run_in_process
    raise AttributeError(name)
