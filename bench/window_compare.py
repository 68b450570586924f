"""The window's compare of 3 sides against the sum of its sides (issue 45): the same three side Jobs, first
one after the other on the window's executor, then as the Compare tab runs them (app.compare.side_jobs, all
submitted at once). Each phase gets a fresh lowering cache ($CMLENS_CACHE in a temporary folder) so each
side does its work. Prints both times and ratios
side by side; asserts nothing (on 2 cores three lowerings share the CPUs, so expect more than the slowest)."""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

WORDS = ["ds_cnn", "--vary", "target=m4,m7,m55"]


def _wait(signal, timeout_s: float = 1800) -> list:
    loop, got = QEventLoop(), []
    signal.connect(lambda *a: (got.append(a), loop.quit()))
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    loop.exec()
    return got


def main() -> int:
    app = QApplication.instance() or QApplication([])
    from backend_core.orchestration.compare.sides import side_job, specs_from_words

    from app.compare.side_jobs import CompareSideJobs
    from app.runtime.qt_job import QtExecutor

    jobs = [side_job(s) for s in specs_from_words(WORDS)]
    os.environ["CMLENS_CACHE"] = tempfile.mkdtemp(prefix="cmlens-bench-alone-")
    ex = QtExecutor()
    alone = []
    for job in jobs:
        t0 = time.perf_counter()
        h = ex.submit(job)
        status = _wait(h.finished)[0][0]
        alone.append(time.perf_counter() - t0)
        print(f"side {job.lower.target:11s} alone: {alone[-1]:6.1f} s ({status})", flush=True)
    os.environ["CMLENS_CACHE"] = tempfile.mkdtemp(prefix="cmlens-bench-compare-")
    runner = CompareSideJobs()
    t0 = time.perf_counter()
    runner.start(WORDS)
    while runner.is_running():
        _wait(runner.finished, 5)
    both = time.perf_counter() - t0
    print(f"\n{'':24s}{'seconds':>9s}{'x slowest':>11s}{'x sum':>8s}")
    print(f"{'sum of the 3 sides':24s}{sum(alone):9.1f}{sum(alone) / max(alone):11.2f}{1:8.2f}")
    print(f"{'slowest side':24s}{max(alone):9.1f}{1:11.2f}{max(alone) / sum(alone):8.2f}")
    print(f"{'window compare':24s}{both:9.1f}{both / max(alone):11.2f}{both / sum(alone):8.2f}"
          f"   ({os.cpu_count()} cores)")
    cores = os.cpu_count() or 1
    bound = max(max(alone), sum(alone) / cores)      # no schedule of these sides on these cores is faster
    print(f"{'bound on ' + str(cores) + ' cores':24s}{bound:9.1f}{bound / max(alone):11.2f}{bound / sum(alone):8.2f}"
          "   (max of the slowest side and the sum ÷ cores)")
    from results import publish

    publish("window_compare", what="the window's Compare of 3 sides (ds_cnn on m4, m7, m55, fresh caches): all "
            "sides submitted at once ÷ one after the other on the same executor",
            result=f"{both:.1f} s ÷ {sum(alone):.1f} s = {both / sum(alone):.2f}× ({both / max(alone):.2f}× the "
            f"slowest side, {both / bound:.2f}× the {cores}-core bound max(slowest, sum ÷ {cores}))",
            goal="about the slowest side, within the cores", figures={
                "parallel_s": both, "serial_s": sum(alone), "slowest_s": max(alone), "bound_s": bound})
    app.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
