"""Sweep throughput: ExecuTorch's own Cortex-M test cases (the installed corpus) lowered as jobs
serially (one process, one after another), on the local process pool, and on a two-worker Dask
LocalCluster, side by side in one run. Prints wall times, the ratios to serial, each executor's
overhead per job against the median job time, and the peak memory of a worker process.

    .venv/bin/python bench/sweep.py [--limit N] [--workers 2]

Every mode lowers with the cache off, so each does the same work."""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class PeakMemory:
    """Highest RSS of any child process of this one (the pool's or the cluster's workers), sampled."""

    def __init__(self) -> None:
        import psutil

        self.me, self.peak, self._stop = psutil.Process(), 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for c in self.me.children(recursive=True):
                try:
                    self.peak = max(self.peak, c.memory_info().rss)
                except Exception:  # noqa: BLE001  a child that just exited
                    pass
            time.sleep(0.5)

    def __enter__(self) -> "PeakMemory":
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def job_seconds(results: dict) -> list[float]:
    return [sum(r.get("timings_s", {}).values()) for r in results.values() if r.get("timings_s")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limit", type=int, default=0, help="only the first N cases (default: all)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/cmlens-bench-sweep"))
    args = ap.parse_args()

    from backend_core.orchestration.jobs import LowerRequest
    from backend_core.orchestration.execute import DaskExecutor, LocalPoolExecutor
    from backend_core.orchestration.execute.task import run_task
    from backend_core.orchestration.sweep import build_jobs, run_sweep
    from tests.corpus.et_cases import case_names

    names = case_names()[: args.limit or None]
    src = ROOT / "tests" / "corpus" / "et_cases.py"
    jobs = build_jobs([f"{src}:{n}" for n in names], {}, ("lower",), LowerRequest(use_cache=False), keep=())
    print(f"{len(jobs)} ExecuTorch Cortex-M cases, lower step, cache off, {args.workers} workers")
    import shutil

    shutil.rmtree(args.out, ignore_errors=True)

    t = time.monotonic()                                   # serial: this process, one job after another
    serial = {j.label: run_task(j.to_dict()) for j in jobs}
    serial_s = time.monotonic() - t
    med = statistics.median(job_seconds(serial))
    print(f"serial      {serial_s:8.1f} s  median job {med:.2f} s")

    with PeakMemory() as pm:
        t = time.monotonic()
        pool = run_sweep(jobs, args.out / "pool", LocalPoolExecutor(args.workers))
        pool_s = time.monotonic() - t
    pool_peak = pm.peak

    from distributed import LocalCluster

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, PeakMemory() as pm2:
        ex = DaskExecutor(cluster=cluster)
        ex.client.run(lambda: __import__("backend_core.orchestration.jobs"))       # start-up outside the timing, like the pool's
        t = time.monotonic()
        dask = run_sweep(jobs, args.out / "dask", ex)
        dask_s = time.monotonic() - t
        ex.close()
    dask_peak = pm2.peak

    def overhead(wall: float, results: dict) -> float:
        return (wall * args.workers - sum(job_seconds(results))) / len(jobs)

    ok = lambda res: sum(1 for r in res.values() if r["status"] == "done")   # noqa: E731
    print(f"local pool  {pool_s:8.1f} s  {serial_s / pool_s:5.2f}x serial  overhead/job {overhead(pool_s, pool.results):.2f} s"
          f" ({overhead(pool_s, pool.results) / med:.1%} of the median job)  peak worker RSS {pool_peak / 2**20:.0f} MiB")
    print(f"dask        {dask_s:8.1f} s  {serial_s / dask_s:5.2f}x serial  overhead/job {overhead(dask_s, dask.results):.2f} s"
          f" ({overhead(dask_s, dask.results) / med:.1%} of the median job)  peak worker RSS {dask_peak / 2**20:.0f} MiB")
    per = max(pool_peak, dask_peak) / 2**30
    print(f"done: serial {ok(serial)}, pool {ok(pool.results)}, dask {ok(dask.results)} of {len(jobs)}; "
          f"a 24 GiB machine holds about {int(22 / per) if per else '?'} such workers (2 GiB left to the OS)")
    same = all(serial[k]["status"] == r["status"] for r in pool.results.values() for k in [r["job"]["label"]])
    print("same statuses on all three:", same)
    return 0


if __name__ == "__main__":
    sys.exit(main())
