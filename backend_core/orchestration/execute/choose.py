"""Which executor a face asked for, from its options: the one place that maps `--scheduler`,
`--workers` (and the window's "run in a worker") to an Executor, closed the same way by everyone."""
from __future__ import annotations

from backend_core.orchestration.execute.api import ExecutorBase


def open_executor(*, scheduler: str | None = None, workers: int | None = None,
                  kind: str = "pool") -> ExecutorBase:
    """`scheduler` given: Dask; else `kind`: "pool" (a local process pool of `workers`), "process"
    (each job in a fresh worker process) or "here" (this process). Use it as a context manager."""
    if scheduler:
        from backend_core.orchestration.execute.dask import DaskExecutor

        return DaskExecutor(scheduler)
    if kind == "pool":
        from backend_core.orchestration.execute.pool import LocalPoolExecutor

        return LocalPoolExecutor(workers)
    if kind == "process":
        from backend_core.orchestration.execute.worker_process import WorkerProcessExecutor

        return WorkerProcessExecutor()
    if kind == "here":
        from backend_core.orchestration.execute.inprocess import InProcessExecutor

        return InProcessExecutor()
    raise ValueError(f"unknown executor kind {kind!r}")
