"""Executors that run a batch of jobs on other processes (the local pool, Dask): they implement
`run_batch(items, on_done, on_start, cancel)`, the loop that also survives dead workers, and this base
turns it into `submit` / `map` handles. Results arrive as plain dicts (the worker's JSON), kept on the
handle (`set_result_dict`) so a sweep stores exactly what the worker returned."""
from __future__ import annotations

import threading
from functools import partial
from typing import Any, Callable, Iterable

from backend_core.orchestration.jobs import Job, JobResult
from backend_core.orchestration.jobs.result import CANCELLED
from backend_core.orchestration.execute.api import EventCallback, ExecutorBase, JobHandle
from backend_core.orchestration.execute.task import crash_result

Item = tuple[str, dict[str, Any]]                 # (job id, job dict)
OnDone = Callable[[str, dict[str, Any]], None]
OnStart = Callable[[str], None]
DIED_TWICE = ("its worker process died twice while running it alone (killed, or out of memory: a torch "
              "worker needs about 1 GB)")


class BatchExecutor(ExecutorBase):
    """`map(jobs)` runs them as one batch on a background thread; each handle's events are
    "started" and "finished" (the worker's own events stay in the worker)."""

    def run_batch(self, items: list[Item], on_done: OnDone, on_start: OnStart,
                  cancel: threading.Event) -> None:  # pragma: no cover - each executor has its own
        raise NotImplementedError

    def submit(self, job: Job, on_event: EventCallback | None = None) -> JobHandle:
        return self.map([job], on_event=(lambda h, kind, data: on_event(kind, data)) if on_event else None)[0]

    def map(self, jobs: Iterable[Job],
            on_event: Callable[[JobHandle, str, dict[str, Any]], None] | None = None) -> list[JobHandle]:
        jobs = list(jobs)
        cancel = threading.Event()
        handles: list[JobHandle] = []

        def cancel_one() -> None:
            if all(h.cancel_requested for h in handles):     # the batch stops when none of it is wanted
                cancel.set()

        for job in jobs:
            h = JobHandle(job, cancel_one)
            if on_event is not None:
                h.add_listener(partial(on_event, h))
            handles.append(h)
        items = [(str(i), j.to_dict()) for i, j in enumerate(jobs)]

        def on_start(jid: str) -> None:
            handles[int(jid)].emit("started", {})

        def on_done(jid: str, res: dict[str, Any]) -> None:
            h = handles[int(jid)]
            h.set_result_dict(res)
            h.emit("finished", {"status": res.get("status")})
            h.set_result(JobResult.from_dict(res))

        def work() -> None:
            try:
                self.run_batch(items, on_done, on_start, cancel)
            except BaseException as exc:  # noqa: BLE001 - every handle gets a result, never a hang
                for h, (_, d) in zip(handles, items):
                    if not h.done():
                        row = crash_result(d, f"{type(exc).__name__}: {exc}")
                        h.set_result_dict(row)
                        h.set_result(JobResult.from_dict(row))
            finally:
                for h, (_, d) in zip(handles, items):
                    if not h.done():              # cancelled before it ran or while it ran
                        res = JobResult.from_dict(crash_result(d, "cancelled", kind="Cancelled"))
                        res.status, res.error = CANCELLED, {**(res.error or {}), "exit_code": 130}
                        h.set_result_dict(res.to_dict())
                        h.set_result(res)

        threading.Thread(target=work, name="cmlens-batch", daemon=True).start()
        return handles
