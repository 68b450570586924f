"""`cmlens history` costs, measured side by side in one run:

1. backfill of 8 commits (the tests' repository: a small MLP, commit 5 adds a LayerNorm, 7 widens a
   layer) one by one in this process vs on the local process pool, lowering cache off so both do the
   same work; wall times and the ratio;
2. the cost of `--record` against the lowering it records, as `cmlens lower --record` pays it: git
   started before the job (`start_record`), then the result recorded into a SQLite store (the report,
   the compare's facts, the insert), median of 8, as a share of the lowering's own time (cache off);
   into an existing store, and the first record that creates one; for the small MLP and for MLPerf
   Tiny's DS-CNN. Imports are outside both sides (the lowering's 5-8 s of torch and ExecuTorch, the
   store's SQLAlchemy), as they are paid once per process;
3. what one CLI call pays: whole `cmlens lower --no-cache` processes with and without `--record`,
   alternated, imports included.

    .venv/bin/python bench/history_backfill.py [--workers 2] [--record-only] [--whole-pairs 3]
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


def record_cost(repo: Path, tmp: Path) -> dict[str, float]:
    """Median seconds of `--record` as `cmlens lower --record` pays it in a fresh process (git's root
    forgotten each time): `start_record` before the job (locate the repository, start git reading HEAD,
    open the store) plus `record_job_result` after it (the report, facts, the writes); into an existing store ("record",
    with its "before" and "after" parts), and the first record ("first": it creates the store and runs
    its migrations); and the lowering's own seconds ("lowering")."""
    from backend_core.orchestration.execute.inprocess import run_in_process
    from backend_core.orchestration.history import git as history_git
    from backend_core.orchestration.history import record_job_result
    from backend_core.orchestration.history.record import start_record
    from backend_core.orchestration.jobs import Job, LowerRequest

    model = str(repo / "model.py")
    job = Job(model, LowerRequest(calib=1, use_cache=False), steps=("lower", "memory"))
    res = run_in_process(job)                                   # warm: imports, first-lowering costs
    record_job_result(res, model, str(tmp / "warm.db"))
    samples: dict[str, list[float]] = {"record": [], "before": [], "after": [], "first": [], "lowering": [],
                                       "floor": []}
    for i in range(REPEAT + 1):
        for db, kind in ((tmp / "steady.db", "record"), (tmp / f"new{i}.db", "first")):
            history_git._ROOTS.clear()                          # a fresh CLI process knows no repository
            t0 = time.perf_counter()
            start_record(model, str(db))                        # before the job: cmlens lower's check_record
            before = time.perf_counter() - t0
            t0 = time.perf_counter()
            res = run_in_process(job)
            samples["lowering"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            record_job_result(res, model, str(db))
            after = time.perf_counter() - t0
            samples[kind].append(before + after)
            if kind == "record":
                samples["before"].append(before)
                samples["after"].append(after)
                samples["floor"].append(sqlite_cycle(tmp / "floor.db"))
    if os.environ.get("BENCH_SAMPLES"):
        print({k: [round(x * 1000) for x in v] for k, v in samples.items()}, file=sys.stderr)
    # the first round is dropped: the steady store's first WAL, the first new store's imports
    return {k: statistics.median(v[1:] if k != "lowering" else v) for k, v in samples.items()}


def whole_command(repo: Path, tmp: Path, pairs: int) -> tuple[float, float]:
    """Median wall seconds of `cmlens lower MODEL --no-cache` and of the same with `--record`, each a fresh
    process, alternated pair by pair: what one CLI call pays, SQLAlchemy's import included (about
    0.17 s, once per process: a window, a backfill's worker or a sweep pays it once for many records)."""
    import subprocess

    base = [sys.executable, "-m", "app.cli", "lower", str(repo / "model.py"), "--no-cache", "--calib", "1"]
    rec = [*base, "--record", "--history", str(tmp / "whole.db")]
    times: dict[str, list[float]] = {"plain": [], "record": []}
    for i in range(pairs + 1):                                  # the first pair warms the disk cache
        for name, cmd in (("plain", base), ("record", rec)):
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
            if i:
                times[name].append(time.perf_counter() - t0)
    return statistics.median(times["plain"]), statistics.median(times["record"])


def sqlite_cycle(db: Path) -> float:
    """Seconds of the least a record can write on this disk at this moment: open a SQLite file in WAL
    mode (synchronous=NORMAL, as the store), insert one small row, commit, close (4 fdatasyncs: the WAL
    created, then checkpointed and removed). Measured right after each record, on the same disk."""
    import sqlite3

    t0 = time.perf_counter()
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("CREATE TABLE IF NOT EXISTS t (x TEXT)")
    con.execute("INSERT INTO t VALUES ('x')")
    con.commit()
    con.close()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--record-only", action="store_true", help="only the cost of --record (no backfill)")
    ap.add_argument("--whole-pairs", type=int, default=3,
                    help="pairs of whole `cmlens lower` processes with and without --record (0: none)")
    args = ap.parse_args()
    from backend_core.orchestration.execute.task import quiet_logs
    from tests.history.conftest import make_repo

    quiet_logs()
    with tempfile.TemporaryDirectory(prefix="cmlens-bench-history-") as d:
        tmp = Path(d)
        repo, _ = make_repo(tmp / "repo")
        os.environ["CMLENS_CACHE"] = str(tmp / "cache")
        if not args.record_only:
            serial = backfill_once(repo, "local", 1, tmp / "serial.db")
            pool = backfill_once(repo, "pool", args.workers, tmp / "pool.db")
        mlp = record_cost(repo, tmp)
        (tmp / "ds").mkdir()
        ds_repo = ds_cnn_repo(tmp / "ds" / "repo")
        ds = record_cost(ds_repo, tmp / "ds")
        whole = {name: whole_command(r, tmp / "ds", args.whole_pairs)
                 for name, r in (("small MLP", repo), ("DS-CNN", ds_repo))} if args.whole_pairs else {}
    print()
    if not args.record_only:
        print(f"backfill of 8 commits, cache off ({os.cpu_count()} cores)")
        print(f"  serial (this process, one by one)   {serial:7.1f} s")
        print(f"  local pool of {args.workers} processes          {pool:7.1f} s   serial/pool = {serial / pool:.2f}x")
    print("cost of --record: before the job (locate the repository, start git, open the store) + after it (report, "
          "facts, the writes); 'floor': a bare SQLite WAL write of one row on the same disk right after (4 fdatasyncs)")
    for name, c in (("small MLP (the tests' model)", mlp), ("DS-CNN", ds)):
        lw = c["lowering"]
        print(f"cost of --record, {name} (median of {REPEAT})")
        print(f"  lowering (lower + memory steps)     {lw * 1000:7.0f} ms")
        print(f"  recording it (existing store)       {c['record'] * 1000:7.0f} ms   = {c['record'] / lw * 100:.1f} % "
              f"of the lowering (before {c['before'] * 1000:.0f} + after {c['after'] * 1000:.0f} ms; "
              f"floor {c['floor'] * 1000:.0f} ms = {c['floor'] / lw * 100:.1f} %)")
        print(f"  first record (creates the store)    {c['first'] * 1000:7.0f} ms   = {c['first'] / lw * 100:.1f} % "
              "of the lowering")

    for name, (plain, rec) in whole.items():
        print(f"whole command, {name}: cmlens lower --no-cache {plain:.2f} s, with --record {rec:.2f} s "
              f"= {rec / plain:.3f}x (median of {args.whole_pairs} alternated pairs; imports included)")


if __name__ == "__main__":
    main()
