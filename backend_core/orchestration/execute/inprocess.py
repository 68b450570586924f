"""Jobs in this process, each on its own thread (the CLI and tests). Cancel sets the job's cancel
event: `execute_job` stops between stages and steps, and the firmware steps end their subprocesses."""
from __future__ import annotations

import threading
from typing import Any

from backend_core.orchestration.jobs import Job, JobResult, execute_job
from backend_core.orchestration.execute.api import EventCallback, ExecutorBase, JobHandle


class InProcessExecutor(ExecutorBase):
    """`submit` starts the job on a daemon thread at once; the handle's result keeps the live objects
    (the lowering, the run) that a CLI prints from."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._threads: list[threading.Thread] = []

    def describe(self) -> str:
        return "this process"

    def submit(self, job: Job, on_event: EventCallback | None = None) -> JobHandle:
        cancel = threading.Event()
        handle = JobHandle(job, cancel.set)
        if on_event is not None:
            handle.add_listener(on_event)

        def work() -> None:
            try:
                handle.set_result(execute_job(job, handle.emit, cancel))
            except BaseException as exc:  # noqa: BLE001 - an unforeseen crash is a result, never a hang
                handle.future.set_exception(exc)

        thread = threading.Thread(target=work, name=f"cmlens-job-{job.label or job.model}", daemon=True)
        self._threads.append(thread)
        thread.start()
        return handle

    def close(self) -> None:
        for t in self._threads:
            t.join()
        self._threads.clear()


def run_in_process(job: Job, on_event: EventCallback | None = None) -> JobResult:
    """Submit `job` here and wait; Ctrl-C cancels it and still returns its (cancelled) result."""
    with InProcessExecutor() as ex:
        handle = ex.submit(job, on_event)
        return wait_cancellable(handle)


def wait_cancellable(handle: JobHandle) -> Any:
    """Wait for a handle; a KeyboardInterrupt cancels the job, then waits for its cancelled result."""
    try:
        return handle.result()
    except KeyboardInterrupt:
        handle.cancel()
        return handle.result()
