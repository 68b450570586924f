"""Jobs on a dask.distributed cluster: a scheduler address (`--scheduler tcp://HOST:8786`) or a cluster
object (a LocalCluster in tests). The same task function as the local pool; a job whose worker died is
retried once by the scheduler, then reported as a failed row."""
from __future__ import annotations

import threading
import time
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.orchestration.execute.batch import DIED_TWICE, BatchExecutor, Item, OnDone, OnStart
from backend_core.orchestration.execute.checks import check_worker
from backend_core.orchestration.execute.task import crash_result, run_task, share_cores


class DaskExecutor(BatchExecutor):
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

    @property
    def workers(self) -> int:  # type: ignore[override]  # read-only here: the cluster decides
        """Jobs that run at once: the cluster's worker threads."""
        return sum(int(w.get("nthreads", 1)) for w in self.client.scheduler_info().get("workers", {}).values()) or 1

    def describe(self) -> str:
        n = len(self.client.scheduler_info().get("workers", {}))
        return f"Dask cluster at {self.address} ({n} worker(s))"

    def check_workers(self, steps: list[str], et_root: str | None) -> list[dict[str, Any]]:
        """Each worker checks itself (client.run runs on every worker); the result names the worker."""
        found = self.client.run(check_worker, list(steps), et_root)
        return [{**info, "worker": addr} for addr, info in found.items()]

    def run_batch(self, items: list[Item], on_done: OnDone, on_start: OnStart, cancel: threading.Event) -> None:
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
