"""`cmlens sweep`: models × `--vary` axes through the same jobs as every other subcommand, on a local
process pool (default) or a Dask cluster (`--scheduler`), into a resumable folder with a dashboard.

Exit status: 0 every job done, 1 a job failed (its row says why), 2 bad input (before anything runs),
130 cancelled (what finished is kept; run the same command again to resume)."""
from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any


from .common import guarded
from .outputs import FOLDER, add_output
from .lowering_flags import add_lowering_flags


def add_sweep_command(sub: Any) -> None:
    s = sub.add_parser(
        "sweep", help="run models x configurations (CPUs, options, boards) as jobs; dashboard + baselines",
        description="One job per model and combination of --vary values, on a local process pool sized to the "
                    "cores, or on a Dask cluster with --scheduler. Results stream into --out as they finish; a "
                    "rerun skips finished jobs. Writes dashboard.html, reports/, baselines/ and baseline.json.")
    s.add_argument("models", nargs="+", metavar="MODEL", help="zoo names, model files, or folders of model files")
    s.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2",
                   help="an axis: target, activations, flow, channels_last, calib, board, schedule (repeatable; "
                        "schedule=none,auto,auto+int8,fit:BOARD,FILE: a patch schedule cell adds the schedule step)")
    s.add_argument("--steps", default="lower,memory", help="comma-separated: lower, check, memory, numerics, "
                                                         "evaluate, run, profile (default lower,memory)")
    s.add_argument("--eval-data", metavar="DIR", help="labelled samples for the evaluate step (default: each "
                                                      "model's get_eval_data())")
    s.add_argument("--eval-limit", type=int, metavar="N", help="evaluate the first N samples only")
    add_output(s, "--out", kind=FOLDER, type=Path, default=Path("cmlens-sweep"), help="output folder (default ./cmlens-sweep)")
    s.add_argument("--scheduler", metavar="tcp://HOST:8786", help="run on this Dask scheduler's workers")
    s.add_argument("--workers", type=int, default=None, help="local pool size (default: the number of cores)")
    add_lowering_flags(s, "target", "flow", "activations", "channels-last", "no-cache")
    s.add_argument("--board", default=None, help="memory board (fit verdict) when not varied")
    s.add_argument("--et-root", default=None, help="ExecuTorch checkout for run/profile (same path on every worker)")
    s.add_argument("--cmsis-nn", default=None, help="CMSIS-NN tree for run/profile")
    s.add_argument("--timeout", type=float, default=120.0, help="simulator timeout per run (s)")
    from .history_flags import add_record_flags

    add_record_flags(s)
    s.set_defaults(func=run_sweep_command)


def run_sweep_command(args: argparse.Namespace) -> int:
    out, err = sys.stdout, sys.stderr

    def work() -> int:
        import os

        from backend_core.orchestration.jobs import LowerRequest, RunOptions
        from backend_core.orchestration.execute import open_executor
        from backend_core.orchestration.sweep import build_jobs, expand_models, parse_vary, run_sweep

        steps = tuple(s.strip() for s in args.steps.split(",") if s.strip())
        axes = parse_vary(args.vary)                          # exit 2 on a bad axis, before anything runs
        models = expand_models(args.models)                   # exit 2 on an unknown model
        base = LowerRequest(target=args.target, flow=args.flow, activations=args.activations,
                            channels_last=args.channels_last, use_cache=not args.no_cache)
        run = RunOptions(timeout=args.timeout, et_root=args.et_root or os.environ.get("EXECUTORCH_ROOT"),
                         cmsis_nn=args.cmsis_nn or os.environ.get("CMSIS_NN_PATH"))
        from backend_core.orchestration.jobs.spec import EvaluateOptions

        if "evaluate" in steps and args.eval_data:
            from backend_core.analyses.accuracy.data import folder_layout

            folder_layout(args.eval_data)                     # a bad folder: exit 2 before anything runs
        jobs = build_jobs(models, axes, steps, base, run, board=args.board,
                          evaluate=EvaluateOptions(data=args.eval_data, limit=args.eval_limit))
        cancel = threading.Event()

        def progress(p, text: str) -> None:
            print(f"[{p.line()}] {text}", file=out, flush=True)

        with open_executor(scheduler=args.scheduler, workers=args.workers) as executor:
            outcome = run_sweep(jobs, args.out, executor, on_progress=progress, cancel=cancel,
                                meta={"steps": list(steps), "axes": {k: [str(v) for v in vs] for k, vs in axes.items()},
                                      "models": models})
        from .history_flags import record_results

        record_results(args, outcome.results.values(), source="sweep")   # --record: each model file's cells
        print(f"wrote {args.out / 'dashboard.html'} ({len(outcome.results)} result(s), "
              f"{outcome.seconds:.1f} s on {outcome.executor})", file=out)
        if outcome.cancelled:
            print("cancelled: finished jobs are kept; run the same command again to do the rest", file=err)
        return outcome.exit_code

    return guarded(work, err)
