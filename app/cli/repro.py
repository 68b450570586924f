"""`cmlens repro MODEL`: write the smallest standalone Python file (torch, torchao, ExecuTorch only) that
fails an ExecuTorch pass the same way the model does, found by delta debugging over the graph. Exit 0
when the file reproduces the error in a fresh process, 3 when it does not, 2 bad input."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


from .common import ZOO_EPILOG, print_error, submit, write_json
from .outputs import add_output
from .lowering_flags import add_lowering_flags


def add_repro_command(sub: Any) -> None:
    p = sub.add_parser("repro", help="write a minimal standalone reproducer of an ExecuTorch pass failure",
                       description="Lower MODEL; when an ExecuTorch pass or torchao's PT2E quantisation fails, reduce the model "
                       "to the smallest "
                       "subgraph around the failing op that fails with the same error, and write it as one Python "
                       "file using only torch, torchao and ExecuTorch (to file upstream).",
                       epilog=ZOO_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="zoo name, path/to/model.py[:NAME] or path/to/model.pt2")
    add_output(p, "-o", "--output", default="repro.py", help="the file to write (default %(default)s)")
    add_lowering_flags(p, "target", "flow", "calib", "channels-last")
    p.add_argument("--no-fresh-check", action="store_true",
                   help="do not run the written file in a fresh Python process at the end")
    add_output(p, "--json", metavar="F", help="write the result (file, lines, expected error, tries) as JSON")
    p.add_argument("--verbose", "-v", action="store_true")
    p.set_defaults(func=run_repro)


def run_repro(args: argparse.Namespace) -> int:
    """A Job with the repro step (backend_core.orchestration.jobs.steps.repro): the same road as the window's button."""
    from backend_core.common.errors import CmlensError
    from backend_core.stages.models import parse_model_source

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "status":
            print(f"… {data['text']}", file=sys.stderr, flush=True)

    json_file = Path(args.json) if args.json else None
    try:
        parse_model_source(args.model)           # fail fast, before the 8 s import
        from backend_core.orchestration.jobs import Job, LowerRequest, ReproOptions

        job = Job(args.model, LowerRequest(args.target, args.flow, channels_last=args.channels_last, calib=args.calib),
                  steps=("repro",), repro=ReproOptions(output=args.output, fresh_check=not args.no_fresh_check))
        res = submit(job, on_event)
    except CmlensError as e:
        return print_error(e, sys.stderr, json_file)      # --json is always written
    rep = res.steps.get("repro")
    if rep is None:                              # it failed before a file was written
        if res.exception is not None:
            return print_error(res.exception, sys.stderr, json_file)
        write_json(json_file, {"error": res.error, "exit_code": 3})
        return 3
    minimal = "" if rep.get("minimal", True) else " — NOT MINIMAL: the whole export"
    print(f"wrote {rep['path']}: {rep['lines']} lines, {len(rep['nodes'])} op(s) of the model{minimal}"
          + (f" ({', '.join(rep['nodes'])})" if len(rep["nodes"]) <= 20 else ""))
    if rep.get("note"):
        print(f"  not minimal because {rep['note']}")
    print(f"  fails in {rep['stage']} with: {rep['expected']}")
    print(f"  delta debugging: {len(rep['tries'])} candidate(s) tried "
          f"({', '.join(f'{n} node(s) ' + ('same error' if ok else 'no') for n, ok in rep['tries'])})")
    write_json(json_file, {**rep, **({"error": res.error} if res.error else {})})
    if rep["reproduces"]:
        print(f"  checked: `python {rep['path']}` in a fresh process fails the same way")
    if res.exception is not None:
        return print_error(res.exception, sys.stderr)
    return 0
