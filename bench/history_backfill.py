"""`cmlens history` costs, measured side by side in one run:

1. backfill of 8 commits (the tests' repository: a small MLP, commit 5 adds a LayerNorm, 7 widens a
   layer) one by one in this process vs on the local process pool, lowering cache off so both do the
   same work; wall times and the ratio;
2. the cost of `--record` against the lowering it records, as `cmlens lower --record` pays it: git
   started before the job (`start_record`), then the result recorded into a SQLite store (the report,
   the compare's facts, the insert), median of 8, as a share of the lowering's own time (cache off);
   into an existing store, and the first record that creates one; for the small MLP and for MLPerf
   Tiny's DS-CNN. Imports are outside both sides (the lowering's 5-8 s of torch and ExecuTorch, the
   store's SQLAlchemy), as they are paid once per process.

    .venv/bin/python bench/history_backfill.py [--workers 2] [--record-only]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def backfill_once(repo: Path, executor: str, workers: int, db: Path) -> float:
    from app.cli import main

    t0 = time.perf_counter()
    code = main(["history", "backfill", str(repo / "model.py"), "--last", "8", "--calib", "1", "--no-cache",
                 "--executor", executor, "--workers", str(workers), "--history", str(db)])
    if code != 0:
        raise SystemExit(f"backfill on {executor} exited {code}")
    return time.perf_counter() - t0


DS_CNN = '''"""MLPerf Tiny DS-CNN (ExecuTorch's examples), fixed weights, channels-last input as the zoo feeds it."""
import torch
from executorch.examples.models import mlperf_tiny


def get_model():
    torch.manual_seed(0)
    return mlperf_tiny.DSCNNKWS().eval()


def get_example_inputs():
    return ((torch.rand(1, 1, 49, 10) * 2 - 1).to(memory_format=torch.channels_last),)
'''


def ds_cnn_repo(root: Path) -> Path:
    """A repository with one commit of a DS-CNN model file: a lowering of a real MLPerf Tiny size."""
    import subprocess

    root.mkdir(parents=True)
    (root / "model.py").write_text(DS_CNN)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "ds_cnn"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    return root


REPEAT = 8          # records per side; the first steady one is dropped (its store's first WAL)


def record_cost(repo: Path, tmp: Path) -> tuple[float, float, float]:
    """Median seconds of `--record` as `cmlens lower --record` pays it in a fresh process (git's root
    forgotten each time): `start_record` before the job (locate the repository, start git reading HEAD)
    plus `record_job_result` after it (the report, facts, the store); into an existing store, and the
    first record (which creates the store and runs its migrations); and the lowering's own seconds."""
    from backend_core.execute.inprocess import run_in_process
    from backend_core.history import git as history_git
    from backend_core.history import record_job_result
    from backend_core.history.record import start_record
    from backend_core.jobs import Job, LowerRequest

    model = str(repo / "model.py")
    job = Job(model, LowerRequest(calib=1, use_cache=False), steps=("lower", "memory"))
    res = run_in_process(job)                                   # warm: imports, first-lowering costs
    record_job_result(res, model, str(tmp / "warm.db"))
    lowerings, records, firsts = [], [], []
    for i in range(REPEAT + 1):
        for db, out in ((tmp / "steady.db", records), (tmp / f"new{i}.db", firsts)):
            history_git._ROOTS.clear()                          # a fresh CLI process knows no repository
            t0 = time.perf_counter()
            start_record(model)                                 # before the job: cmlens lower's check_record
            before = time.perf_counter() - t0
            t0 = time.perf_counter()
            res = run_in_process(job)
            lowered = time.perf_counter() - t0
            t0 = time.perf_counter()
            record_job_result(res, model, str(db))
            out.append(before + time.perf_counter() - t0)
            lowerings.append(lowered)
    if os.environ.get("BENCH_SAMPLES"):
        print("samples ms", [round(x * 1000) for x in records], [round(x * 1000) for x in firsts], file=sys.stderr)
    return statistics.median(records[1:]), statistics.median(firsts), statistics.median(lowerings)


def fdatasync_ms(folder: Path) -> float:
    """One fdatasync of a small file on the store's disk (median of 9): SQLite's commit and close in WAL
    mode make four, the floor of any record on this disk."""
    f = folder / "sync-probe"
    times = []
    with open(f, "wb") as fh:
        for _ in range(9):
            fh.write(b"x" * 4096)
            fh.flush()
            t0 = time.perf_counter()
            os.fdatasync(fh.fileno())
            times.append(time.perf_counter() - t0)
    f.unlink()
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--record-only", action="store_true", help="only the cost of --record (no backfill)")
    args = ap.parse_args()
    from backend_core.execute.task import quiet_logs
    from tests.history.conftest import make_repo

    quiet_logs()
    with tempfile.TemporaryDirectory(prefix="cmlens-bench-history-") as d:
        tmp = Path(d)
        repo, _ = make_repo(tmp / "repo")
        os.environ["CMLENS_CACHE"] = str(tmp / "cache")
        if not args.record_only:
            serial = backfill_once(repo, "local", 1, tmp / "serial.db")
            pool = backfill_once(repo, "pool", args.workers, tmp / "pool.db")
        rec, first, low = record_cost(repo, tmp)
        (tmp / "ds").mkdir()
        rec2, first2, low2 = record_cost(ds_cnn_repo(tmp / "ds" / "repo"), tmp / "ds")
        sync = fdatasync_ms(tmp)
    print()
    if not args.record_only:
        print(f"backfill of 8 commits, cache off ({os.cpu_count()} cores)")
        print(f"  serial (this process, one by one)   {serial:7.1f} s")
        print(f"  local pool of {args.workers} processes          {pool:7.1f} s   serial/pool = {serial / pool:.2f}x")
    print(f"cost of --record: before the job (locate, start git) + after it (report, facts, store); "
          f"this disk's fdatasync {sync:.1f} ms, 4 per record")
    for name, (r, f, lw) in (("small MLP (the tests' model)", (rec, first, low)), ("DS-CNN", (rec2, first2, low2))):
        print(f"cost of --record, {name} (median of {REPEAT})")
        print(f"  lowering (lower + memory steps)     {lw * 1000:7.0f} ms")
        print(f"  recording it (existing store)       {r * 1000:7.0f} ms   = {r / lw * 100:.1f} % of the lowering")
        print(f"  first record (creates the store)    {f * 1000:7.0f} ms   = {f / lw * 100:.1f} % of the lowering")


if __name__ == "__main__":
    main()
