"""A local process pool (the default for sweeps and `profile --cpus`): spawn processes sized to the
cores, no server. A job whose worker died is retried alone once, then reported as a failed row."""
from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from backend_core.orchestration.execute.batch import DIED_TWICE, BatchExecutor, Item, OnDone, OnStart
from backend_core.orchestration.execute.task import crash_result, run_task, share_cores


class LocalPoolExecutor(BatchExecutor):
    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)

    def describe(self) -> str:
        return f"local pool of {self.workers} process(es)"

    def _pool(self) -> ProcessPoolExecutor:
        # spawn, not fork: a forked torch process can deadlock; each worker imports the stack once
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=share_cores, initargs=(self.workers,))

    def run_batch(self, items: list[Item], on_done: OnDone, on_start: OnStart, cancel: threading.Event) -> None:
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


