"""`cmlens compare A B [C ...]`: N lowerings, saved reports, artefacts or baselines side by side, ops
matched by what the user wrote; text, --json, --html, --baseline-out. Exit 0 done, 2 bad input,
3 a side's lowering failed."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .outputs import add_output
from .lowering_flags import add_lowering_flags

SIDE_HELP = ("SOURCE[@OPT,...]: a zoo name, model.py[:NAME] or .pt2 (lowered), a `cmlens lower --json` report, "
             "a .pte/.bpte/.etrecord (read back) or a baseline JSON. OPT: key=value (target, flow, activations, "
             "channels_last, calib, profile=RUN.json, numerics=NUM.json, label) or a bare m4 / int16 / explicit / "
             "channels-last / as-given")
EPILOG = """examples:
  cmlens compare ds_cnn --vary target=m4,m55          one model on two CPUs
  cmlens compare ds_cnn@m4 ds_cnn@m55                 the same, written per side
  cmlens compare a.py b.py --target m55               two model files under the same options
  cmlens compare layernorm_mlp --vary activations=int8,int16
  cmlens compare model.py --vary channels_last=no,yes
  cmlens compare r1.json r2.json --html diff.html     two saved `cmlens lower --json` results
  cmlens compare theirs.pte model.py                  a program from another tool (weak match: no provenance)
"""


def add_lowering_options(p: argparse.ArgumentParser) -> None:
    """Options every lowered side gets unless it says otherwise (SIDE@target=m4)."""
    g = p.add_argument_group("lowering options (defaults for every side that is a model source)")
    add_lowering_flags(g, "target", "flow", "activations", "channels-last", "calib", "no-cache", unset=True)
    g.add_argument("--numerics", type=int, default=0, metavar="N",
                   help="also run numerics (float vs lowered) on N seeded random inputs for each lowered side: "
                        "SQNR per op and at the output")
    g.add_argument("--accuracy", type=int, default=None, metavar="N",
                   help="also evaluate each lowered side on labelled data (the model's get_eval_data(), or "
                        "--eval-data): top-1 of float and of the lowered program, flips; the first N samples "
                        "(0: all). A `cmlens evaluate --json` report as a side carries its accuracy already")
    g.add_argument("--eval-data", metavar="DIR", help="labelled samples for --accuracy (as `cmlens evaluate --data`)")
    g.add_argument("--rtol", type=float, default=None, metavar="R",
                   help="relative tolerance for scales (default 1e-5: another machine's rounding is not a change)")
    g.add_argument("--verbose", "-v", action="store_true", help="show ExecuTorch logs")


def side_defaults(args: argparse.Namespace) -> dict[str, Any]:
    from backend_core.common.cpus import normalise_target

    out: dict[str, Any] = {}
    if args.target:
        out["target"] = normalise_target(args.target)
    if args.flow:
        out["flow"] = args.flow
    if args.activations:
        out["activations"] = args.activations
    if args.channels_last:
        out["channels_last"] = True
    if args.calib is not None:
        out["calib"] = int(args.calib) if str(args.calib).isdigit() else args.calib
    return out




def status_printer(text: str) -> None:
    print(f"… {text}", file=sys.stderr, flush=True)


def load_sides(texts: list[str], args: argparse.Namespace, vary: list[str] | None = None) -> list[Any]:
    """Every side of the compare: one Job per side that must be lowered or read, submitted on the executor
    the user chose (here, one side after the other; a local pool or Dask, all at once), then the sides."""
    from backend_core.orchestration.compare.sides import auto_labels, expand_vary, parse_side, side_from_result, side_job

    defaults = side_defaults(args)
    specs = expand_vary([parse_side(t, defaults) for t in texts], vary or [])
    labels = auto_labels(specs)
    accuracy = None
    if getattr(args, "accuracy", None) is not None or getattr(args, "eval_data", None):
        from backend_core.common.errors import BadInputError
        from backend_core.orchestration.jobs.spec import EvaluateOptions

        if args.accuracy is not None and args.accuracy < 0:
            raise BadInputError("--accuracy N: N must be 0 (all samples) or more.", "E.g. --accuracy 200.")
        if args.eval_data:
            from backend_core.analyses.accuracy.data import folder_layout

            folder_layout(args.eval_data)         # missing, empty or unlabelled: said before any lowering
        accuracy = EvaluateOptions(data=args.eval_data, limit=args.accuracy or None)
    jobs = [side_job(s, use_cache=not args.no_cache, numerics_samples=args.numerics, accuracy=accuracy) for s in specs]
    rows = run_side_jobs(jobs, labels, args)
    return [side_from_result(s, lab, row) for s, lab, row in zip(specs, labels, rows)]


def run_side_jobs(jobs: list[Any], labels: list[str], args: argparse.Namespace) -> list[dict[str, Any] | None]:
    """Each side's JobResult as JSON (None where there was no job). Ctrl-C cancels what runs."""
    from backend_core.orchestration.execute import as_completed, open_executor

    from .common import submit

    on_event = (lambda kind, data: status_printer(data["text"]) if kind == "status" else None) if args.verbose else None
    rows: list[dict[str, Any] | None] = [None] * len(jobs)
    todo = [(i, j) for i, j in enumerate(jobs) if j is not None]
    if getattr(args, "executor", "here") == "here" and not getattr(args, "scheduler", None):
        for i, job in todo:                       # one lowering at a time in this process
            status_printer(f"{labels[i]}: {' + '.join(job.steps)} of {job.model}")
            rows[i] = submit(job, on_event).to_dict()
        return rows
    with open_executor(scheduler=args.scheduler, workers=args.workers, kind=args.executor) as ex:
        status_printer(f"{len(todo)} side job(s) on {ex.describe()}")
        handles = {ex.submit(job): i for i, job in todo}
        try:
            for h in as_completed(list(handles)):
                row = rows[handles[h]] = h.result().to_dict()
                status_printer(f"{labels[handles[h]]}: {row['status']}")
        except KeyboardInterrupt:
            for h in handles:
                h.cancel()
            raise
    return rows


def add_compare_command(sub: Any) -> None:
    p = sub.add_parser("compare", help="compare lowerings, reports or artefacts side by side",
                       description="Compare N lowerings (models, CPUs, options, releases), matched by the op the "
                       "user wrote (module path + source line + op at quantisation time): fallbacks added and "
                       "removed with their reasons, qparams, bytes, instructions, SQNR.", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sides", nargs="+", metavar="SIDE", help=SIDE_HELP)
    p.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2",
                   help="one side per value of a lowering option, e.g. target=m4,m55 (repeatable: multiplies)")
    add_lowering_options(p)
    ex = p.add_argument_group("where the sides run")
    ex.add_argument("--executor", choices=["here", "pool"], default="here",
                    help="here: one side after the other in this process (default); pool: every side at once in "
                         "a local process pool")
    ex.add_argument("--workers", type=int, default=None, help="pool size (default: the number of cores)")
    ex.add_argument("--scheduler", metavar="tcp://HOST:8786", help="run the sides on this Dask scheduler's workers")
    out = p.add_argument_group("output")
    out.add_argument("--all-rows", action="store_true", help="print unchanged ops too")
    add_output(out, "--json", metavar="F", help="write the comparison JSON (docs/json-format.md)")
    out.add_argument("--with-reports", action="store_true",
                     help="embed every side's full lowering report (graphs per stage) in the --json file")
    add_output(out, "--html", metavar="F", help="write one self-contained interactive HTML file: the summary "
                     "deltas on top, the graphs side by side with synced selection, every side's stages")
    add_output(out, "--baseline-out", metavar="F",
                     help="write the last side as a baseline for `cmlens gate` (docs/json-format.md)")
    p.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    from backend_core.common.errors import BadInputError, CmlensError

    try:
        if len(args.sides) < 2 and not args.vary:
            raise BadInputError("compare needs two sides or more.",
                                "Give two sources (a.py b.py, r1.json r2.json) or vary one: "
                                "cmlens compare ds_cnn --vary target=m4,m55.")
        sides = load_sides(args.sides, args, args.vary)
        from backend_core.orchestration.compare import DEFAULT_RTOL, compare_facts, compare_to_dict
        from backend_core.orchestration.compare.text import comparison_text

        cmp = compare_facts([s.facts for s in sides], args.rtol if args.rtol is not None else DEFAULT_RTOL,
                            reports=[s.report for s in sides])
    except CmlensError as e:
        from .common import print_error

        return print_error(e, verbose=args.verbose)
    print(comparison_text(cmp, all_rows=args.all_rows))
    try:
        if args.json:
            from backend_core.common.files import write_atomic

            write_atomic(args.json, json.dumps(compare_to_dict(cmp, reports=args.with_reports), indent=1, default=str))
            print(f"wrote json: {args.json}")
        if args.html:
            from backend_core.analyses.report.interactive import compare_html, write_text

            print(f"wrote html: {write_text(args.html, compare_html(compare_to_dict(cmp), cmp.reports))}")
        if args.baseline_out:
            from backend_core.orchestration.compare.baseline import write_baseline

            print(f"wrote baseline of [{len(sides)}] {sides[-1].facts.label}: "
                  f"{write_baseline(sides[-1].facts, args.baseline_out)}")
    except OSError as e:
        print(f"error: cannot write output: {e}", file=sys.stderr)
        return 2
    return 0
