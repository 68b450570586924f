"""The execution interface every face submits to: `Executor.submit(job) -> JobHandle`.

A handle is the job's future: `result()` waits for the `JobResult`, `cancel()` stops the job (in
process: the job's cancel event; a worker process: SIGTERM, and `cancel(force=True)` kills its process group
at once; a pool or Dask: not started, or its worker's result is dropped), `alive()` says whether anything
of the job still runs, `done()` polls, and `add_listener(cb)` receives the job's events as
`cb(kind, data)` (the same events `execute_job` emits: step, status, line, stage, run_step).
`as_completed(handles)` yields handles as they finish, from any mix of executors."""
from __future__ import annotations

import threading
from concurrent.futures import Future
from concurrent.futures import as_completed as _futures_as_completed
from typing import Any, Callable, Iterable, Iterator, Protocol, runtime_checkable

from backend_core.orchestration.jobs import Job, JobResult

EventCallback = Callable[[str, dict[str, Any]], None]


class JobHandle:
    """One submitted job: its future result, its events and how to cancel it."""

    def __init__(self, job: Job, cancel: Callable[[], None] | None = None) -> None:
        self.job = job
        self.future: Future[JobResult] = Future()
        self._cancel = cancel
        self._listeners: list[EventCallback] = []
        self._lock = threading.Lock()
        self.cancel_requested = False
        self._result_dict: dict[str, Any] | None = None     # a worker's result dict as it came (pool, Dask)

    def add_listener(self, callback: EventCallback) -> None:
        with self._lock:
            self._listeners.append(callback)

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        """Called by the executor for each event of the job (on the executor's thread)."""
        with self._lock:
            listeners = list(self._listeners)
        for cb in listeners:
            cb(kind, data)

    def cancel(self, force: bool = False) -> None:
        """Stop the job. `force`: at once, without letting it stop its build or simulator (a worker
        process's group is killed); executors with nothing to kill treat it as a plain cancel."""
        self.cancel_requested = True
        if self._cancel is not None and not self.future.done():
            self._cancel()

    def done(self) -> bool:
        return self.future.done()

    def alive(self) -> bool:
        """Whether anything of the job still runs (a worker process outlives its result by a moment)."""
        return not self.future.done()

    def wait_exit(self, timeout: float | None = None) -> bool:
        """Wait until nothing of the job runs; False when it still does after `timeout` seconds."""
        try:
            self.future.result(timeout)
        except Exception:  # noqa: BLE001 - a timeout or the executor's failure: say whether it still runs
            pass
        return not self.alive()

    def pid(self) -> int:
        """The worker process's id (0 when the job runs in this process or a pool the handle does not own)."""
        return 0

    def command(self) -> list[str]:
        """The worker process's command line ([] when there is none)."""
        return []

    def result_dict(self) -> dict[str, Any]:
        """The result as the worker returned it (a sweep stores exactly that), else `result().to_dict()`."""
        return self._result_dict if self._result_dict is not None else self.result().to_dict()

    def set_result_dict(self, row: dict[str, Any]) -> None:
        self._result_dict = row

    def result(self, timeout: float | None = None) -> JobResult:
        """The job's result (a failed or cancelled job is a result too, never an exception)."""
        return self.future.result(timeout)

    def set_result(self, result: JobResult) -> None:
        if not self.future.done():
            self.future.set_result(result)


@runtime_checkable
class Executor(Protocol):
    """Runs jobs. Every implementation is a context manager whose `close()` frees its workers."""

    workers: int

    def describe(self) -> str: ...

    def submit(self, job: Job, on_event: EventCallback | None = None) -> JobHandle: ...

    def map(self, jobs: Iterable[Job]) -> list[JobHandle]: ...

    def check_workers(self, steps: list[str], et_root: str | None) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...

    def __enter__(self) -> "Executor": ...

    def __exit__(self, *exc: Any) -> None: ...


class ExecutorBase:
    """What every executor shares: `map` as repeated `submit`, the context manager, a default check."""

    workers = 1

    def describe(self) -> str:  # pragma: no cover
        raise NotImplementedError

    def submit(self, job: Job, on_event: EventCallback | None = None) -> JobHandle:  # pragma: no cover
        raise NotImplementedError

    def map(self, jobs: Iterable[Job]) -> list[JobHandle]:
        return [self.submit(j) for j in jobs]

    def check_workers(self, steps: list[str], et_root: str | None) -> list[dict[str, Any]]:
        from backend_core.orchestration.execute.checks import check_worker

        return [check_worker(steps, et_root)]      # this machine's processes

    def close(self) -> None:
        pass

    def __enter__(self) -> "ExecutorBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def as_completed(handles: Iterable[JobHandle], timeout: float | None = None) -> Iterator[JobHandle]:
    """Each handle as its job finishes (first finished first), whatever executor runs it."""
    by_future = {h.future: h for h in handles}
    for fut in _futures_as_completed(by_future, timeout=timeout):
        yield by_future[fut]
