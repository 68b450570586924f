"""`cmlens numerics MODEL`: per-layer numerics on the host — float vs PT2E fake-quant vs the
lowered Cortex-M program, and whether each runnable pass changed the numbers.

app/cli.py wires it in with `add_numerics_command(subparsers)`. Exit 0 done, 2 bad input (model
source, --inputs folder/files, options), 3 a stage or the analysis failed, 130 interrupted."""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from .common import lower_request_from, print_error, submit
from .outputs import add_output
from .lowering_flags import add_lowering_flags

SORT_CHOICES = {"local": "local", "fq": "vs_fake_quant", "float": "vs_float"}


def add_numerics_command(sub: Any) -> None:
    p = sub.add_parser(
        "numerics", help="per-layer error: float vs fake-quant vs lowered, per pass",
        description="Lower MODEL, then run the float model, the PT2E fake-quant model and every "
                    "host-runnable stage (the final lowered program included: cortex_m ops have "
                    "Python reference kernels) on the inputs. Prints per-layer SQNR / cosine / max "
                    "error (also in LSB of the output scale), worst layers first, the model-output "
                    "error with top-1 agreement, and for each pass whether it was numerically "
                    "neutral or where it first changed the numbers.")
    p.add_argument("model", help="zoo name, path/to/model.py[:NAME] or path/to/model.pt2")
    add_lowering_flags(p, "target", "flow", "calib", "channels-last", "keep-going", "rewrite")
    p.add_argument("--inputs", default=None, metavar="DIR|N",
                   help="N random samples, or a folder of .pt/.npy files (one sample per file); "
                        "default: the model's example inputs")
    add_output(p, "--csv", metavar="F", help="write every layer's metrics as CSV")
    add_output(p, "--plot", suffix=".png", metavar="F.png", help="write the per-layer SQNR plot (PNG, offscreen)")
    add_output(p, "--json", metavar="F", help="write the full result as JSON")
    p.add_argument("--sort", choices=tuple(SORT_CHOICES), default="local",
                   help="rank layers by local error (the layer's own kernel on reference inputs), "
                        "cumulative vs fake-quant, or cumulative vs float (default %(default)s)")
    p.add_argument("--local-samples", type=int, default=0, metavar="K",
                   help="pool the local (isolated) error over the first K samples only, to save "
                        "time: it reruns every kernel once more (default 0 = all samples)")
    p.add_argument("--top", type=int, default=20, metavar="K",
                   help="rows of the printed table (0 = all; default %(default)s)")
    p.add_argument("--verbose", "-v", action="store_true", help="show tracebacks and ExecuTorch logs")
    p.set_defaults(func=run_numerics_command)


def _progress(prefix: str):
    state = {"last": 0.0}

    def cb(done: int, total: int, text: str) -> None:
        now = time.monotonic()
        if done < total and now - state["last"] < 0.5:
            return
        state["last"] = now
        print(f"[{prefix} {done:3d}/{total}] {text}", file=sys.stderr, flush=True)

    return cb


def run_numerics_command(args: argparse.Namespace) -> int:
    from backend_core.common.errors import CmlensError
    from backend_core.stages.models.loaded import parse_model_source
    from backend_core.analyses.numerics.inputs import parse_inputs

    try:
        parse_model_source(args.model)             # cheap checks before the 8 s import
        parse_inputs(args.inputs)
        if args.top < 0 or args.local_samples < 0:
            from backend_core.common.errors import BadInputError
            raise BadInputError("--top and --local-samples must be 0 or more.")
    except CmlensError as e:
        return print_error(e, verbose=args.verbose)

    print("… importing ExecuTorch (first time takes ~8 s)", file=sys.stderr, flush=True)
    from backend_core.orchestration.jobs import Job
    from backend_core.orchestration.jobs.steps.numerics import progress_events
    from backend_core.orchestration.jobs.spec import NumericsOptions

    job = Job(args.model, lower_request_from(args), steps=("lower", "numerics"),
              numerics=NumericsOptions(inputs=args.inputs, local_samples=args.local_samples))
    done = submit(job, progress_events(_progress("lowering"), _progress("analysis")))
    if done.exception is not None:
        return print_error(done.exception, verbose=args.verbose)
    if done.error:
        print(f"error: {done.error.get('message')}", file=sys.stderr)
        return done.exit_code
    result = done.numerics
    from backend_core.analyses.numerics.table import summary_text, to_csv

    sort = SORT_CHOICES[args.sort]
    print(summary_text(result, limit=args.top or None, sort=sort))
    try:
        from backend_core.common.files import write_atomic

        if args.csv:
            write_atomic(args.csv, to_csv(result, sort=sort))
            print(f"wrote {args.csv}", file=sys.stderr)
        if args.json:
            write_atomic(args.json, json.dumps(result.to_dict(), allow_nan=False))
            print(f"wrote {args.json}", file=sys.stderr)
        if args.plot:
            from app.numerics.view import render_sqnr_png

            render_sqnr_png(result, args.plot)
            print(f"wrote {args.plot}", file=sys.stderr)
    except OSError as e:
        print(f"error: cannot write output: {e}", file=sys.stderr)
        return 3
    return 0
