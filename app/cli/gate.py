"""`cmlens gate RESULT --baseline BASE.json`: fail a CI job on regressions against a baseline.
Exit 0 nothing regressed, 1 regressions (printed), 2 a bad baseline (another version, model, CPU or
option set) or a check without data, 3 the result's lowering failed."""
from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from .compare import SIDE_HELP, add_lowering_options, load_sides
from .outputs import add_output

EPILOG = """examples:
  cmlens lower model.py --json lowering.json --html lowering.html
  cmlens gate lowering.json --baseline ci/baseline.json --no-new-fallbacks --max-arena +5% --max-flash +5%
  cmlens gate lowering.json --write-baseline ci/baseline.json      # make (or refresh) the baseline
  cmlens gate model.py --target m4 --baseline m4.json --fits stm32f746
  cmlens gate digits_cnn --accuracy 0 --write-baseline acc.json       # a baseline with accuracy
  cmlens gate digits_cnn --calib 1 --baseline acc.json --min-accuracy -0.5   # exit 1: 1 random calibration image
  cmlens gate lowering.json --history .cmlens/history.db         # against the default branch's last record
  cmlens run kws.py --board stm32l4r5 --profile --json run.json
  cmlens gate kws.py@profile=run.json --target m4 --baseline kws.json --max-latency-ms 25   # the estimate on the board
  cmlens gate kws.py@profile=run.json --target m4 --max-latency-ms 25     # a fixed limit needs no baseline

With no check flag the gate runs every check both files carry data for, with no slack: no new
fallback, qparams within --rtol, arena and .pte not larger, instructions not more, output SQNR at most
0.5 dB lower. Qparams are always compared with the relative tolerance --rtol (default 1e-5), so the
rounding of another machine is never a regression.
"""


def add_gate_command(sub: Any) -> None:
    p = sub.add_parser("gate", help="exit 1 when a result regressed against a baseline (CI)",
                       description="Compare RESULT with a baseline and exit 1 on regressions: new fallbacks, "
                       "qparams, arena, flash, instructions, estimated milliseconds, SQNR, board fit.", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result", metavar="RESULT", help=SIDE_HELP)
    p.add_argument("--baseline", metavar="BASE.json", help="the baseline (written by --write-baseline)")
    add_output(p, "--write-baseline", metavar="F", help="write RESULT as a baseline (after gating, if --baseline)")
    p.add_argument("--history", metavar="STORE", help="the baseline is the last record of the same model and options "
                   "on --branch in this history store (`cmlens history`; a path or postgresql://...)")
    p.add_argument("--branch", default=None, metavar="NAME",
                   help="with --history: the branch (default: the repository's default branch, e.g. origin's HEAD, "
                        "main or master; else the one branch the records are on)")
    c = p.add_argument_group("checks")
    c.add_argument("--no-new-fallbacks", action="store_true", help="fail on any op that falls back now and did not")
    c.add_argument("--same-qparams", action="store_true", help="fail when a scale / zero point moved beyond --rtol")
    c.add_argument("--max-arena", metavar="+5%", help="planned arena at most this much above the baseline (%% or bytes)")
    c.add_argument("--max-flash", metavar="+5%", help=".pte size at most this much above the baseline")
    c.add_argument("--max-instructions", metavar="+3%", help="profiled instructions at most this much above")
    c.add_argument("--max-latency-ms", metavar="MS",
                   help="fail when the result's estimated milliseconds (the cycle estimate of its profile on its "
                        "board: RESULT@profile=RUN.json from `cmlens run --board B --profile`) exceed MS; names the "
                        "fallback islands and ops that grew")
    c.add_argument("--min-sqnr", metavar="-1dB", help="output SQNR (vs float) at most this much below")
    c.add_argument("--min-accuracy", metavar="-0.5",
                   help="top-1 accuracy of the lowered program at most this many points below the baseline's "
                        "(evaluates the result on labelled data: --accuracy N, default all samples)")
    c.add_argument("--fits", metavar="BOARD",
                   help="the result must fit this board (cmlens memory --board list), or RAM[/FLASH] sizes: 64K/256K")
    add_output(p, "--json", metavar="F", help="write the checks and the comparison as JSON")
    add_output(p, "--html", metavar="F", help="write the comparison with the baseline as HTML")
    add_lowering_options(p)
    # `--min-sqnr -1dB` / `--max-arena -5%`: argparse takes a value starting with "-" for an option
    # unless it looks like a negative number; let a negative limit look like one.
    p._negative_number_matcher = re.compile(r"^-\d+$|^-\d*\.\d+$|^-\d+(\.\d+)?\s*(db|%|k|m)$", re.IGNORECASE)
    p.set_defaults(func=run_gate_command)


def _options(args: argparse.Namespace) -> Any:
    """The checks asked for (limits parsed and the board found before anything is lowered)."""
    from backend_core.orchestration.compare import DEFAULT_RTOL
    from backend_core.orchestration.compare.gate import GateOptions, board_of, parse_limit, parse_ms, parse_points

    if args.fits:
        board_of(args.fits)
    return GateOptions(
        no_new_fallbacks=args.no_new_fallbacks, same_qparams=args.same_qparams, fits=args.fits,
        rtol=args.rtol if args.rtol is not None else DEFAULT_RTOL,
        max_arena=parse_limit(args.max_arena, "--max-arena") if args.max_arena else None,
        max_flash=parse_limit(args.max_flash, "--max-flash") if args.max_flash else None,
        max_instructions=parse_limit(args.max_instructions, "--max-instructions") if args.max_instructions else None,
        max_latency_ms=parse_ms(args.max_latency_ms, "--max-latency-ms") if args.max_latency_ms else None,
        min_sqnr=parse_limit(args.min_sqnr, "--min-sqnr", db=True) if args.min_sqnr else None,
        min_accuracy=parse_points(args.min_accuracy, "--min-accuracy") if args.min_accuracy else None)


def _precheck(base: Any, args: argparse.Namespace) -> None:
    """A result to lower is checked against the baseline's configuration before the lowering."""
    from backend_core.orchestration.compare.baseline import check_configuration
    from backend_core.orchestration.compare.sides import LOWERING, parse_side
    from backend_core.stages.models import parse_model_source

    from .compare import side_defaults

    spec = parse_side(args.result, side_defaults(args))
    if spec.kind == LOWERING:
        o = spec.options
        check_configuration(base, model=parse_model_source(spec.source).name, target=o["target"], flow=o["flow"],
                            activations=o["activations"], channels_last=bool(o["channels_last"]))


def run_gate_command(args: argparse.Namespace) -> int:
    from backend_core.common.errors import BadInputError, CmlensError

    try:
        if args.baseline and args.history:
            raise BadInputError("--baseline and --history both given.", "Gate against one: a file or the history.")
        asked = _options(args)
        from backend_core.orchestration.compare.gate import absolute_options

        alone = not args.baseline and not args.history and absolute_options(asked)   # fixed limits only
        if not args.baseline and not args.write_baseline and not args.history and not alone:
            raise BadInputError("gate needs --baseline BASE.json, --history STORE (or --write-baseline F to make one).",
                                "Make the baseline once: cmlens gate RESULT --write-baseline BASE.json (only "
                                "--max-latency-ms and --fits need none)")
        if asked.min_accuracy and args.accuracy is None:
            args.accuracy = 0                          # the check needs the result evaluated: all samples
        base = None
        if args.baseline:
            from backend_core.orchestration.compare.baseline import read_baseline

            base = read_baseline(args.baseline)        # a bad baseline fails before any lowering
            base.label = f"baseline {args.baseline}"
        if base is not None:
            _precheck(base, args)
        store = None
        if args.history:
            from backend_core.orchestration.history import open_store

            store = open_store(args.history, create=False)        # a missing or too new store: exit 2, no lowering
        (side,) = load_sides([args.result], args)
        if store is not None:
            from backend_core.orchestration.history.gate_base import baseline_from_history, model_of

            with store:
                base, _ = baseline_from_history(store, side.facts, args.branch, model_of(args.result))
            args.baseline = f"{args.history} ({base.label})"
        code = 0
        if base is not None or alone:
            from backend_core.orchestration.compare.gate import default_options, gate_text, run_absolute_gate, run_gate

            if base is None:
                g = run_absolute_gate(side.facts, asked)
            else:
                opts = asked if asked.any else default_options(base, side.facts, asked.rtol)
                g = run_gate(base, side.facts, opts)
            print(gate_text(g, args.baseline, side.facts.label))
            code = 1 if g.regressions else 0
            if args.json:
                from backend_core.orchestration.compare import compare_to_dict

                from backend_core.common.files import write_atomic

                write_atomic(args.json, json.dumps({**g.to_dict(), "comparison": compare_to_dict(g.comparison)},
                                                   indent=1, default=str))
                print(f"wrote json: {args.json}")
            if args.html:
                from backend_core.orchestration.compare import compare_to_dict
                from backend_core.analyses.report.interactive import compare_html, write_text

                page = compare_html(compare_to_dict(g.comparison), g.comparison.reports)
                print(f"wrote html: {write_text(args.html, page)}")
        if args.write_baseline:
            from backend_core.orchestration.compare.baseline import write_baseline

            print(f"wrote baseline: {write_baseline(side.facts, args.write_baseline)}")
        return code
    except CmlensError as e:
        print(f"error: {e.message}", file=sys.stderr)
        if e.hint:
            print(f"  {e.hint}", file=sys.stderr)
        return e.exit_code
    except OSError as e:
        print(f"error: cannot write output: {e}", file=sys.stderr)
        return 2
