"""`--record` / `--history URL` on the commands that run a Job (lower, evaluate, run, profile, sweep):
the result goes into the history store, keyed by the commit of the model file's repository."""
from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

RECORD_HELP = ("add the result to the history store (`cmlens history`), keyed by the commit of the model "
               "file's git repository (default store: .cmlens/history.db in that repository)")
HISTORY_HELP = "the history store: a file path, sqlite:///PATH or postgresql://USER@HOST:PORT/DB"


def add_record_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("history")
    g.add_argument("--record", action="store_true", help=RECORD_HELP)
    g.add_argument("--history", metavar="URL", default=None, help=HISTORY_HELP + " (implies --record)")


def wants_record(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "record", False) or getattr(args, "history", None))


def recorded_steps(args: argparse.Namespace, steps: tuple[str, ...]) -> tuple[str, ...]:
    """A job's steps, plus the memory step when the result is recorded: a record of a lowering carries every
    figure a backfill's does (arena, RAM, flash: `history backfill` runs lower + memory), so `gate --history
    --max-arena` finds them in main's last record."""
    return tuple(dict.fromkeys((*steps, "memory"))) if wants_record(args) else steps


def check_record(args: argparse.Namespace, model_source: str | None = None) -> None:
    """Before any work: a model that is no file in a git repository, or a store that cannot be opened, cannot
    be recorded (BadInputError, exit 2); git reads HEAD's commit and dirty flag while the job runs and the
    store stays open (the record waits for neither after it)."""
    if wants_record(args):
        from backend_core.orchestration.history.record import start_record

        start_record(model_source or args.model, getattr(args, "history", None))


def record_if_asked(args: argparse.Namespace, result: Any, model_source: str | None = None, *,
                    source: str = "lower", out: TextIO | None = None) -> int:
    """Record `result` (a JobResult, finished or failed) when --record/--history was given; prints where.
    Returns 0, or the exit code of a recording error (printed with its cause and fix)."""
    if not wants_record(args) or result is None:
        return 0
    from backend_core.common.errors import CmlensError
    from backend_core.orchestration.history import default_store, record_job_result
    from backend_core.orchestration.history.git import locate

    out = out or sys.stderr
    model_source = model_source or args.model
    try:
        where = args.history or str(default_store(locate(model_source)))
        rec = record_job_result(result, model_source, where, source=source)
    except CmlensError as exc:
        print(f"error: not recorded: {exc.message}", file=out)
        if exc.hint:
            print(f"  {exc.hint}", file=out)
        return exc.exit_code
    state = "" if rec.ok else f" (failure: {(rec.error or {}).get('message', '')[:80]})"
    print(f"recorded {rec.model} @ {rec.short}{' (dirty)' if rec.dirty else ''} [{rec.config}]{state} in {where}",
          file=out)
    return 0


def record_results(args: argparse.Namespace, results: Any, *, source: str, out: TextIO | None = None) -> int:
    """--record for a command with several jobs (profile's CPUs, a sweep's cells): each result (a JobResult
    or its JSON) whose model is a file in a git repository; the others are named once, not recorded."""
    if not wants_record(args):
        return 0
    from backend_core.common.errors import CmlensError
    from backend_core.orchestration.history.git import locate
    from backend_core.orchestration.jobs import JobResult

    out = out or sys.stderr
    code, skipped = 0, set()
    for res in results:
        res = JobResult.from_dict(res) if isinstance(res, dict) else res
        try:
            locate(res.job.model)
        except CmlensError:
            skipped.add(res.job.model)
            continue
        code = max(code, record_if_asked(args, res, res.job.model, source=source, out=out))
    if skipped:
        print(f"not recorded (no model file in a git repository): {', '.join(sorted(skipped))}", file=out)
    return code
