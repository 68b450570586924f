"""`cmlens history backfill` and `cmlens history bisect`: the two actions that lower commits (each in a
temporary git worktree, through a Job on the existing executors)."""
from __future__ import annotations

import argparse
import sys
from typing import Any


from .common import guarded, lower_request_from
from .history_flags import HISTORY_HELP
from .lowering_flags import add_lowering_flags


def _lowering_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("lowering (the configuration recorded)")
    add_lowering_flags(g, "target", "flow", "activations", "channels-last", "calib", "no-cache", "keep-going")
    g.add_argument("--board", metavar="NAME", help="also record the fit on this board (cmlens memory --board list)")
    p.add_argument("--history", metavar="URL", help=HISTORY_HELP)
    p.add_argument("--executor", choices=["local", "pool", "dask"], default="pool",
                   help="where the commits are lowered: this process one by one, the local process pool "
                        "(default), or Dask (--scheduler ADDR, else a local cluster)")
    p.add_argument("--workers", type=int, default=None, metavar="N", help="pool / local Dask cluster size")
    p.add_argument("--scheduler", metavar="ADDR", help="a Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--python", metavar="PATH", help="run each job in a worker process under this interpreter (a "
                   "second venv with another ExecuTorch): recorded as its own series, configuration "
                   "'... env=executorch-VERSION'")


def add_backfill_parser(hs: Any) -> None:
    b = hs.add_parser("backfill", help="lower each commit of a range in a temporary worktree and record it",
                      description="Lower the model at each commit (git worktrees under the temp folder: the "
                      "work tree and index are never touched) and record it. Resumable: recorded commits are skipped.")
    b.add_argument("model", metavar="MODEL", help="the model file in its git repository (path[:NAME])")
    r = b.add_mutually_exclusive_group(required=True)
    r.add_argument("--range", metavar="A..B", help="the commits after A up to B (git's A..B), along first parents")
    r.add_argument("--last", type=int, metavar="N", help="the last N commits up to HEAD")
    b.add_argument("--force", action="store_true", help="lower and record again commits already recorded")
    _lowering_flags(b)
    b.set_defaults(func=run_backfill)


def add_bisect_parser(hs: Any) -> None:
    s = hs.add_parser("bisect", help="the first commit where a metric changed from its value at --good",
                      description="Bisect --good..--bad on a recorded metric: lowers about log2(N) commits "
                      "(recorded ones are read). Exit 0 found, 1 no change in the range, 2 bad input.")
    s.add_argument("model", metavar="MODEL", help="the model file in its git repository (path[:NAME])")
    s.add_argument("--metric", required=True, metavar="M", help="e.g. fallbacks, arena_bytes, pte_bytes, "
                   "fallback_op.aten.layer_norm, instructions, lowering_s (`history show` lists them)")
    s.add_argument("--good", required=True, metavar="REV", help="a commit with the old value")
    s.add_argument("--bad", required=True, metavar="REV", help="a commit with the new value")
    s.add_argument("--threshold", metavar="T", help="a change counts when larger than this: 5%% or 2048 "
                   "(default: any change; lowering_s: 25%%)")
    s.add_argument("--failures", choices=["bad", "skip"], default="skip",
                   help="a commit that fails to lower is bad, or skipped (default %(default)s)")
    _lowering_flags(s)
    s.set_defaults(func=run_bisect, executor="local")


def _template(args: argparse.Namespace) -> Any:
    from backend_core.common.cpus import normalise_target
    from backend_core.orchestration.jobs import Job

    normalise_target(args.target)
    if args.board:
        from backend_core.common.boards.specs import board_named

        board_named(args.board)
    return Job("placeholder.py", lower_request_from(args), steps=("lower", "memory"), board=args.board)


def python_env(python: str) -> str:
    """The label of another interpreter's stack ("executorch-1.4.0"); BadInputError when it cannot say."""
    import subprocess

    from backend_core.common.errors import BadInputError

    code = "import importlib.metadata as m; print(m.version('executorch'))"
    try:
        p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BadInputError(f"Cannot run --python {python}: {exc}", "Give the python of a venv with executorch.") from None
    if p.returncode != 0 or not p.stdout.strip():
        raise BadInputError(f"--python {python} has no executorch ({(p.stderr.strip().splitlines() or ['?'])[-1]}).",
                            "Install the stack into that venv (pip install executorch torch torchao ...).")
    return f"executorch-{p.stdout.strip()}"


def _executor(args: argparse.Namespace) -> Any:
    from backend_core.orchestration.execute import open_executor

    if getattr(args, "python", None):
        import os
        from pathlib import Path

        from backend_core.orchestration.execute import WorkerProcessExecutor

        src = str(Path(__file__).resolve().parents[2])          # this cmlens's code, that venv's stack
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
        ex = WorkerProcessExecutor(python=args.python, env=env)
        ex.workers = args.workers or 1
        return ex
    if args.executor == "local":
        return open_executor(kind="here")
    if args.executor == "dask":
        if args.scheduler:
            return open_executor(scheduler=args.scheduler)
        from distributed import LocalCluster

        from backend_core.orchestration.execute import DaskExecutor

        cluster = LocalCluster(n_workers=args.workers or 2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        ex = DaskExecutor(cluster=cluster)
        close = ex.close
        ex.close = lambda: (close(), cluster.close())
        return ex
    return open_executor(kind="pool", workers=args.workers)


def _store(args: argparse.Namespace, model: Any) -> Any:
    from backend_core.orchestration.history import default_store, open_store

    return open_store(args.history or default_store(model))


def _line(rec: Any) -> str:
    if not rec.ok:
        return f"FAILED: {((rec.error or {}).get('message') or '')[:90]}"
    m = rec.metrics
    parts = [f"fallbacks {m.get('fallbacks', 0)}"]
    if "arena_bytes" in m:
        parts.append(f"arena {m['arena_bytes']:,} B")
    if "pte_bytes" in m:
        parts.append(f"flash {m['pte_bytes']:,} B")
    if rec.lowering_s is not None:
        parts.append(f"lowered in {rec.lowering_s:.1f} s")
    return ", ".join(parts)


def run_backfill(args: argparse.Namespace) -> int:
    def work() -> int:
        from backend_core.orchestration.history.backfill import backfill
        from backend_core.orchestration.history.git import commits_in_range, last_commits, locate

        model = locate(args.model)
        commits = commits_in_range(model.root, args.range) if args.range else last_commits(model.root, args.last)
        template = _template(args)
        env = python_env(args.python) if args.python else None
        with _store(args, model) as store:
            def progress(p: Any) -> None:
                eta = f"; ETA {p.eta_s:.0f} s" if p.eta_s else ""
                print(f"[{p.done}/{p.total}] {p.record.short} {(p.record.subject or '')[:40]}: {_line(p.record)}"
                      f" ({p.elapsed_s:.0f} s{eta})", file=sys.stderr, flush=True)

            with _executor(args) as ex:
                print(f"backfill {model.key}: {len(commits)} commit(s) on {ex.describe()}, store {store.where}",
                      file=sys.stderr, flush=True)
                res = backfill(model, commits, template, store, ex, on_progress=progress, force=args.force, env=env,
                               chunk=(args.workers or 1) if args.python else None)
        failed = sum(1 for r in res.recorded if not r.ok)
        print(f"recorded {len(res.recorded)} commit(s) ({failed} failed to lower), skipped {len(res.skipped)} "
              f"already recorded, in {res.seconds:.1f} s")
        return 0
    return guarded(work)


def run_bisect(args: argparse.Namespace) -> int:
    def work() -> int:
        from backend_core.common.errors import BadInputError
        from backend_core.orchestration.history.backfill import backfill
        from backend_core.orchestration.history.bisect import FOUND, NO_CHANGE, bisect, parse_threshold
        from backend_core.orchestration.history.config import config_of_request
        from backend_core.orchestration.history.git import git, locate, resolve_commit

        model = locate(args.model)
        good, bad = resolve_commit(model.root, args.good), resolve_commit(model.root, args.bad)
        if good == bad:
            raise BadInputError("--good and --bad are the same commit.", "Give --good an ancestor of --bad.")
        if good not in git(model.root, "rev-list", "--first-parent", bad).split():
            raise BadInputError(f"--good {args.good} is not an ancestor of --bad {args.bad} along first parents.",
                                "Give an older commit as --good (`git log --first-parent --oneline`).")
        between = git(model.root, "rev-list", "--reverse", "--first-parent", f"{good}..{bad}").split()
        commits = [good, *between]
        threshold = parse_threshold(args.threshold)
        template = _template(args)
        env = python_env(args.python) if args.python else None
        config = config_of_request(template.lower, template.board, env)
        with _store(args, model) as store, _executor(args) as ex:
            def evaluate(commit: str) -> tuple[Any, bool]:
                rec = store.get(model.key, config, commit)
                if rec is not None:
                    print(f"  {commit[:8]} recorded: {_line(rec)}", file=sys.stderr, flush=True)
                    return rec, False
                print(f"  {commit[:8]} lowering …", file=sys.stderr, flush=True)
                done = backfill(model, [commit], template, store, ex, chunk=1, env=env)
                rec = done.recorded[0]
                print(f"  {commit[:8]} {_line(rec)}", file=sys.stderr, flush=True)
                return rec, True

            print(f"bisect {args.metric} over {len(commits)} commits of {model.key} [{config}]", file=sys.stderr)
            res = bisect(commits, args.metric, evaluate, threshold=threshold, failures=args.failures)
        print(f"lowered {len(res.lowered)} commit(s), read {len(res.tested) - len(res.lowered)} from the store")
        if res.outcome == NO_CHANGE:
            print(f"no change of {args.metric} between {good[:8]} and {bad[:8]} (value {res.good.metrics.get(args.metric, 0)})")
            return 1
        if res.outcome != FOUND:
            print(f"undecided: the first change is one of {', '.join(c[:8] for c in res.undecided)} "
                  "(they failed to lower; --failures bad counts a failure as a change)")
            return 1
        from backend_core.orchestration.history.metrics import value

        fb, lg = res.first_bad, res.last_good
        assert fb is not None and lg is not None        # FOUND: both sides of the change
        before, after = value(lg.metrics, args.metric), (value(fb.metrics, args.metric) if fb.ok else None)
        print(f"first bad commit: {fb.commit}\n  subject: {fb.subject}\n  date: {fb.commit_date}")
        if fb.ok:
            print(f"  {args.metric}: {before} -> {after} (at the commit before, {lg.short}: {before})")
        else:
            print(f"  it fails to lower: {(fb.error or {}).get('message')}")
        if res.skipped:
            print(f"  note: {', '.join(c[:8] for c in res.skipped)} between {lg.short} and it failed to lower and "
                  "were skipped: the change may have come with them (--failures bad counts them as changes)")
        print("\n".join(_what_changed(lg, fb)))
        return 0
    return guarded(work)


def _what_changed(before: Any, after: Any) -> list[str]:
    """The compare's summary of the two recorded lowerings (their facts), fallbacks named on the user's ops."""
    if not (before.facts and after.facts):
        return []
    from backend_core.orchestration.compare.facts import SideFacts
    from backend_core.orchestration.compare.result import compare_facts
    from backend_core.orchestration.compare.text import comparison_text

    a, b = SideFacts.from_dict(before.facts), SideFacts.from_dict(after.facts)
    a.label, b.label = f"{before.short} (before)", f"{after.short} (first bad)"
    text = comparison_text(compare_facts([a, b])).splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith("[2]")), len(text))
    end = next((i for i, line in enumerate(text) if line.startswith("Per op:")), len(text))
    return ["", "what changed:"] + [line for line in text[start:end] if line.strip()]
