"""`run_sweep`: skip what a previous run finished, run the rest on an executor, store each result as it
arrives, report progress (done / running / failed, ETA), and write the reports, baselines and dashboard
— also after Ctrl-C, with what finished."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs import Job
from backend_core.orchestration.sweep.store import SweepStore, job_id


@dataclass
class Progress:
    total: int
    skipped: int = 0                         # finished by an earlier run
    done: int = 0
    failed: int = 0
    running: set[str] = field(default_factory=set)
    durations: list[float] = field(default_factory=list)
    started: dict[str, float] = field(default_factory=dict)
    parallel: int = 1
    since: float = field(default_factory=time.monotonic)      # when this run of the sweep began

    @property
    def running_now(self) -> int:
        """Jobs on a worker: a Dask client submits every job at once, so the rest are queued."""
        return min(len(self.running), max(1, self.parallel))

    @property
    def remaining(self) -> int:
        return self.total - self.skipped - self.done - self.failed

    def eta_s(self) -> float | None:
        """From the throughput so far (seconds per finished job), which holds for a pool that runs as many
        as it has workers and for a Dask cluster that was given every job at once (there a job's time
        since submission includes its wait in the queue, so a median of those overestimates)."""
        finished = self.done + self.failed
        if not finished:
            return None
        return (time.monotonic() - self.since) / finished * self.remaining

    def line(self) -> str:
        eta = self.eta_s()
        queued = len(self.running) - self.running_now
        return (f"{self.done + self.failed + self.skipped}/{self.total}: {self.done} done, {self.running_now} running, "
                + (f"{queued} queued, " if queued else "") + f"{self.failed} failed"
                + (f", {self.skipped} from an earlier run" if self.skipped else "")
                + (f", ETA {eta:.0f} s" if eta is not None and self.remaining else ""))


@dataclass
class SweepOutcome:
    out_dir: Path
    executor: str
    progress: Progress
    results: dict[str, dict[str, Any]]
    cancelled: bool = False
    seconds: float = 0.0
    workers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.cancelled:
            return 130
        return 1 if any(r.get("status") != "done" or r.get("exit_code") for r in self.results.values()) else 0


def _completed(handles: list[Any], cancel: threading.Event) -> Any:
    """The handles as they finish; a set `cancel` cancels the rest and stops."""
    from backend_core.orchestration.execute import as_completed

    pending = set(map(id, handles))
    while pending:
        try:
            for h in as_completed([h for h in handles if id(h) in pending], timeout=0.5):
                pending.discard(id(h))
                yield h
        except TimeoutError:
            pass
        if cancel.is_set():
            for h in handles:
                h.cancel()
            return


def run_sweep(jobs: list[Job], out_dir: str | Path, executor: Any, *,
              on_progress: Callable[[Progress, str], None] | None = None,
              cancel: threading.Event | None = None, meta: dict[str, Any] | None = None) -> SweepOutcome:
    """Run `jobs` on `executor` (any backend_core.orchestration.execute Executor: the local pool, Dask) into `out_dir`."""
    say = on_progress or (lambda p, text: None)
    cancel = cancel or threading.Event()
    start = time.monotonic()
    store = SweepStore(out_dir)
    ids = [(job_id(j), j) for j in jobs]
    if len({i for i, _ in ids}) != len(ids):
        raise BadInputError("The sweep names the same job twice.", "Give each model and axis value once.")
    steps = sorted({s for j in jobs for s in j.steps})
    et_root = next((j.run.et_root for j in jobs if j.run.et_root), None)
    workers = executor.check_workers(steps, et_root)
    bad = [w for w in workers if w["problems"]]
    if bad:
        names = "; ".join(f"worker {w.get('worker', w['host'])}: " + ", ".join(w["problems"]) for w in bad)
        raise BadInputError(f"A worker cannot run this sweep's steps ({', '.join(steps)}): {names}.",
                            "Install what is missing on that worker, or drop the steps it cannot run.")
    store.write_manifest(ids, {"executor": executor.describe(), **(meta or {})})
    results: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, Job]] = []
    for jid, job in ids:
        old = store.finished(jid)
        if old is not None:
            results[jid] = old
        else:
            todo.append((jid, job))
    prog = Progress(len(ids), skipped=len(results), parallel=getattr(executor, "workers", len(workers)) or 1)
    say(prog, f"sweep of {len(ids)} job(s) on {executor.describe()}"
        + (f": {len(results)} finished by an earlier run, {len(todo)} to do" if results else ""))

    def on_start(jid: str) -> None:
        prog.running.add(jid)
        prog.started[jid] = time.monotonic()

    def on_done(jid: str, res: dict[str, Any]) -> None:
        prog.running.discard(jid)
        if jid in prog.started:
            prog.durations.append(time.monotonic() - prog.started.pop(jid))
        store.write_result(jid, res)
        results[jid] = res
        if res.get("status") == "done":
            prog.done += 1
        else:
            prog.failed += 1
        label = res.get("job", {}).get("label") or jid
        err = (res.get("error") or {}).get("message")
        say(prog, f"{label}: {res.get('status')}" + (f" ({err})" if err else ""))

    cancelled = False
    handles: list[Any] = []
    try:
        if todo:
            jid_of = {id(job): jid for jid, job in todo}

            def on_event(handle: Any, kind: str, data: dict[str, Any]) -> None:
                if kind == "started":
                    on_start(jid_of[id(handle.job)])

            handles = executor.map([job for _, job in todo], on_event=on_event)
            for h in _completed(handles, cancel):
                on_done(jid_of[id(h.job)], h.result_dict())
        cancelled = cancel.is_set()
    except KeyboardInterrupt:
        cancelled = True
        for h in handles:
            h.cancel()
    finally:
        from backend_core.orchestration.sweep.outputs import write_outputs

        write_outputs(store, ids, results)
    out = SweepOutcome(Path(out_dir), executor.describe(), prog, results, cancelled, time.monotonic() - start,
                       workers)
    say(prog, ("cancelled: " if cancelled else "finished: ") + prog.line())
    return out
