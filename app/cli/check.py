"""`cmlens check MODEL`: the pre-flight alone. Lower (cached) and list what will fail on the target
before anything is built: portable kernels whose dim-order / dtype checks reject their tensors,
operators the checkout's runner has no kernel for (--et-root), bundled outputs in another dim order,
a model that does not fit the board (--board). Exit 0 clean, 1 findings, 2 bad input, 3 the lowering
failed (its stage named). It runs the same job as every subcommand: backend_core.orchestration.jobs, steps lower + check."""
from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from backend_core.stages.models.sniff import is_program_path

from .common import guarded, submit, write_json
from .outputs import add_output
from .lowering_flags import add_lowering_flags


def add_check_command(sub: Any) -> None:
    p = sub.add_parser("check", help="pre-flight: what will fail on the target, before any build",
                       description="Lower MODEL (cached) and check the final program against what the "
                                   "target's runtime checks: portable kernels' dim-order and dtype checks "
                                   "(read from ExecuTorch's kernels/portable/cpu sources), the checkout's "
                                   "kernel registry (--et-root), bundled outputs, the board's memory (--board).")
    p.add_argument("model", help="zoo name, path/to/model.py[:NAME], model.pt2, or a .pte/.bpte")
    add_lowering_flags(p, "target", "flow", "no-cache")
    p.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout whose kernel registry the runner uses")
    p.add_argument("--board", metavar="NAME", help="check the memory fit on this board (`cmlens memory --board list`)")
    add_output(p, "--json", metavar="F", help="write {\"preflight\": [...]} as JSON")
    p.add_argument("--verbose", "-v", action="store_true")
    p.set_defaults(func=run_check_command)


def print_findings(findings: list, out: Any, verbose: bool = False) -> None:
    """The findings as a user reads them, grouped by rule and op (count, first nodes, one message and fix:
    38 identical batch-norm findings are one entry): certainty, rule, op, message, fix; then the runtime
    check the rule models, why it is this certain (the recorded failure it rests on), and the evidence of
    the group's first node. With `verbose` every node of a group is listed."""
    from backend_core.common.finding import group_findings

    for g in group_findings(findings):
        f = g.first
        times = f" ×{g.count}" if g.count > 1 else ""
        print(f"\n  {f.certainty.upper()}  [{f.rule}]  {f.op}{times}", file=out)
        shown = g.nodes if verbose else g.nodes[:3]
        more = f", … ({g.count - len(shown)} more; -v lists them)" if g.count > len(shown) else ""
        print(f"      node{'s' if g.count > 1 else ''}: {', '.join(n or '(program)' for n in shown)}{more}", file=out)
        for line in textwrap.wrap(f.message, 92):
            print(f"      {line}", file=out)
        for i, line in enumerate(textwrap.wrap(f.fix, 88)):
            print(f"      {'fix: ' if i == 0 else '     '}{line}", file=out)
        if f.check:
            for i, line in enumerate(textwrap.wrap(f.check, 86)):
                print(f"      {'check: ' if i == 0 else '       '}{line}", file=out)
        print(f"      certainty: {_certainty_why(f)}", file=out)
        for e in f.evidence:
            print(f"      · {e}", file=out)


def _certainty_why(f: Any) -> str:
    if f.certain and f.confirmed_by:
        return f"{f.certainty}: confirmed by a real failure on QEMU ({f.confirmed_by})"
    if f.certain:
        return f.certainty
    from backend_core.analyses.preflight.rules import rule

    r = rule(f.rule)
    why = (r.note if r is not None and r.note else
           "no recorded failure confirms this rule yet" if r is not None and not r.confirmed else "")
    return f"{f.certainty} (warns, does not stop `cmlens run`)" + (f": {why}" if why else "")


def run_check_command(args: argparse.Namespace) -> int:
    out = sys.stdout
    json_file = Path(args.json) if args.json else None

    def work() -> int:
        from backend_core.common.cpus import normalise_target
        from backend_core.common.errors import BadInputError
        from backend_core.stages.models import parse_model_source

        target = normalise_target(args.target)
        if not is_program_path(args.model):
            parse_model_source(args.model)                  # bad names/paths: exit 2 before the import
        if args.et_root and not Path(args.et_root).is_dir():
            raise BadInputError(f"--et-root {args.et_root} is not a directory.",
                                "Pass the root of an ExecuTorch checkout (it holds kernels/portable/functions.yaml).")
        if args.board:
            from backend_core.common.boards.specs import board_named

            board_named(args.board)                         # an unknown board: exit 2 before the lowering
        from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions

        job = Job(args.model, LowerRequest(target=target, flow=args.flow, use_cache=not args.no_cache),
                  steps=("check",), board=args.board, run=RunOptions(et_root=args.et_root))
        res = submit(job, lambda kind, data: print(f"… {data['text']}", file=sys.stderr, flush=True)
                      if kind == "status" else None)
        res.raise_error()                                   # bad input / a failed lowering: cause and fix
        rep = res.preflight
        n_certain = sum(1 for f in rep.findings if f.certain)
        print(f"{rep.model} → {target}: pre-flight {'clean' if not rep.findings else ''}"
              + (f"{n_certain} will fail, {len(rep.findings) - n_certain} may fail" if rep.findings else ""),
              file=out)
        print_findings(rep.findings, out, verbose=bool(getattr(args, "verbose", False)))
        print("\nchecked: " + "; ".join(rep.checked), file=out)
        for s in rep.skipped:
            print(f"not checked: {s}", file=out)
        write_json(json_file, rep.to_dict())
        if json_file:
            print(f"wrote json: {json_file}", file=out)
        return 1 if rep.findings else 0

    return guarded(work, json_file=json_file)
