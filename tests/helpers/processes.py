"""What a GUI test may leave behind: nothing. Background QThreads and job-worker processes (every Job the
window runs: lowering, numerics, compare, run on target, ...) are all counted (like napari's
_dangling_qthreads)."""
from __future__ import annotations


def leftovers() -> tuple[list, list]:
    """(running background threads, job adapters with a live worker process)."""
    from app.runtime.background import BackgroundRunner
    from app.runtime.qt_job import QtJob

    threads = [r for r in BackgroundRunner.instances() if r.is_running()]
    workers = [w for w in QtJob.instances() if w.has_processes()]
    return threads, workers


def stop_all(threads: list, workers: list) -> None:
    for r in threads:
        r.shutdown()
    for w in workers:
        w.shutdown(graceful=False)
