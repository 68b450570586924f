"""Where a sweep's jobs run. `LocalPool` (the default): a process pool sized to the cores, no server.
`DaskCluster`: the same task functions on a dask.distributed cluster (`--scheduler tcp://HOST:8786`,
or a LocalCluster in tests). Both call `on_done(id, result_dict)` as each job finishes; a job whose
worker died is retried once and then reported as a failed row."""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from ..errors import BadInputError
from .task import check_worker, crash_result, run_task, share_cores

Item = tuple[str, dict[str, Any]]                 # (job id, job dict)
OnDone = Callable[[str, dict[str, Any]], None]
OnStart = Callable[[str], None]
DIED_TWICE = ("its worker process died twice while running it alone (killed, or out of memory: a torch "
              "worker needs about 1 GB)")


class LocalPool:
    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)

    def describe(self) -> str:
        return f"local pool of {self.workers} process(es)"

    def check_workers(self, steps: list[str], et_root: str | None) -> list[dict[str, Any]]:
        return [check_worker(steps, et_root)]      # the pool's processes are this machine

    def _pool(self) -> ProcessPoolExecutor:
        # spawn, not fork: a forked torch process can deadlock; each worker imports the stack once
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=share_cores, initargs=(self.workers,))

    def run(self, items: list[Item], on_done: OnDone, on_start: OnStart, cancel: threading.Event) -> None:
        """A dead worker breaks the whole pool, and every job running then fails with it: only a job that
        was running alone is known to have killed its worker. So the jobs of a broken pool are re-run one
        at a time ("suspects"); a job whose worker dies while it runs alone gets one retry, then a row."""
        pending: deque[Item] = deque(items)
        suspects: deque[Item] = deque()
        deaths: dict[str, int] = {}
        running: dict[Any, Item] = {}
        pool = self._pool()
        try:
            while (pending or suspects or running) and not cancel.is_set():
                if suspects and not running:                       # one suspect, alone
                    jid, d = suspects.popleft()
                    running[pool.submit(run_task, d)] = (jid, d)
                    on_start(jid)
                while not suspects and pending and len(running) < self.workers:   # never queue
                    jid, d = pending.popleft()
                    running[pool.submit(run_task, d)] = (jid, d)
                    on_start(jid)
                done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
                broken = False
                for fut in done:
                    try:
                        res = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        continue
                    on_done(running.pop(fut)[0], res)
                if broken:                         # every job still running died with the pool
                    alone = len(running) == 1
                    for jid, d in running.values():
                        if not alone:
                            suspects.append((jid, d))
                            continue
                        deaths[jid] = deaths.get(jid, 0) + 1
                        if deaths[jid] > 1:
                            on_done(jid, crash_result(d, f"{d.get('label') or d['model']}: {DIED_TWICE}",
                                                      kind="WorkerDied"))
                        else:
                            suspects.append((jid, d))
                    running.clear()
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = self._pool()
        finally:
            if cancel.is_set() or running:
                _kill(pool)
            pool.shutdown(wait=not cancel.is_set(), cancel_futures=True)


def _kill(pool: ProcessPoolExecutor) -> None:
    for proc in list(getattr(pool, "_processes", {}).values()):
        if proc.is_alive():
            proc.terminate()


class DaskCluster:
    """A dask.distributed Client on a scheduler address, or on a cluster object (LocalCluster)."""

    def __init__(self, address: str | None = None, *, cluster: Any = None, connect_timeout: float = 5.0) -> None:
        from distributed import Client

        self.address = address or getattr(cluster, "scheduler_address", "?")
        try:
            self.client = Client(cluster if cluster is not None else address, timeout=f"{connect_timeout}s")
        except (OSError, TimeoutError) as exc:
            raise BadInputError(
                f"Cannot reach the Dask scheduler at {address} ({type(exc).__name__}: {exc}).",
                "Start one on that host: `dask scheduler --host 0.0.0.0 --port 8786`, and workers: "
                f"`dask worker {address} --nthreads 1 --nworkers 2` (each needs `pip install cortexm-lens`); "
                "or drop --scheduler to run on the local process pool.") from None

        self._tune_scheduler()
        self._share_cores()

    def _share_cores(self) -> None:
        """Each worker process gets its host's cores divided by the worker processes on that host."""
        by_host: dict[str, list[str]] = {}
        for addr, w in self.client.scheduler_info().get("workers", {}).items():
            by_host.setdefault(w.get("host", addr), []).append(addr)
        for addrs in by_host.values():
            self.client.run(share_cores, len(addrs), workers=addrs)

    def _tune_scheduler(self) -> None:
        """A job whose worker died is retried once (allowed-failures 1), and a worker holds one job per
        thread (worker-saturation 1.0), so a job queued behind a dying one is not counted as suspicious.
        Set on the scheduler itself (a nested function: the scheduler need not have cmlens installed)."""
        def tune(dask_scheduler: Any) -> tuple[Any, Any]:
            old = (dask_scheduler.allowed_failures, dask_scheduler.WORKER_SATURATION)
            dask_scheduler.allowed_failures = 1
            dask_scheduler.WORKER_SATURATION = 1.0
            return old

        self.scheduler_settings_before = self.client.run_on_scheduler(tune)

    def describe(self) -> str:
        n = len(self.client.scheduler_info().get("workers", {}))
        return f"Dask cluster at {self.address} ({n} worker(s))"

    def check_workers(self, steps: list[str], et_root: str | None) -> list[dict[str, Any]]:
        """Each worker checks itself (client.run runs on every worker); the result names the worker."""
        found = self.client.run(check_worker, list(steps), et_root)
        return [{**info, "worker": addr} for addr, info in found.items()]

    def run(self, items: list[Item], on_done: OnDone, on_start: OnStart, cancel: threading.Event) -> None:
        from distributed import as_completed

        futures = {}
        for jid, d in items:
            fut = self.client.submit(run_task, d, key=f"cmlens-job-{jid}-{time.monotonic_ns()}", pure=False)
            futures[fut] = (jid, d)
            on_start(jid)
        ac = as_completed(list(futures))
        lost: dict[str, int] = {}
        try:
            for fut in ac:
                jid, d = futures.pop(fut)
                if fut.status not in ("finished", "error", "cancelled") and lost.get(jid, 0) < 3:
                    # finished, but its result lived on a worker that died before it was gathered:
                    # the client reschedules the key; wait for it again instead of losing the row
                    lost[jid] = lost.get(jid, 0) + 1
                    futures[fut] = (jid, d)
                    ac.add(fut)
                    continue
                if fut.status == "finished":
                    on_done(jid, fut.result())
                else:
                    exc = fut.exception()
                    died = type(exc).__name__ == "KilledWorker"
                    on_done(jid, crash_result(d, f"{d.get('label') or d['model']}: "
                                                 + (DIED_TWICE if died else f"{type(exc).__name__}: {exc}"),
                                              kind="WorkerDied" if died else "Crash"))
                if cancel.is_set():
                    break
        finally:
            if futures:
                self.client.cancel(list(futures))

    def close(self) -> None:
        self.client.close()
