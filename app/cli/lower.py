"""`cmlens lower MODEL`: lower stage by stage, print per-stage counts and a fallback table,
write JSON/HTML/.pte/.bpte. Exit 0 done, 1 fallbacks with --fail-on-fallback, 2 bad input,
3 a stage failed."""
from __future__ import annotations

import argparse
import sys
import textwrap
import time
from typing import Any

from backend_core.stages.fallback.changed import keep_going_summary

from .history_flags import add_record_flags, check_record, record_if_asked, recorded_steps
from .common import ZOO_EPILOG, cancelled_where, lower_request_from, print_cancelled, print_error, submit
from .outputs import add_output
from .lowering_flags import add_lowering_flags


def add_lower_command(sub: Any, epilog: str = ZOO_EPILOG) -> None:
    p = sub.add_parser("lower", help="quantize and lower a model, explain every fallback",
                       description="Quantize (PT2E, CortexMQuantizer), lower to edge and run every "
                       "CortexMPassManager pass, snapshotting each stage; explain every op left on "
                       "portable kernels.", epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="zoo name, path/to/model.py[:NAME] or path/to/model.pt2")
    add_lowering_flags(p, "target", "flow", "calib", "activations", "channels-last", "keep-going", "rewrite",
                       "verify-suggestions", "no-cache", "schedule", "input-dtype")
    add_output(p, "--json", metavar="F", help="write the JSON report")
    add_output(p, "--html", metavar="F", help="write a standalone HTML report")
    add_output(p, "--pte", metavar="F", help="write the ExecuTorch program")
    add_output(p, "--bpte", metavar="F", help="write a bundled program with reference outputs")
    p.add_argument("--fail-on-fallback", action="store_true", help="exit 1 if any op falls back")
    p.add_argument("--verbose", "-v", action="store_true", help="show tracebacks and ExecuTorch logs")
    add_record_flags(p)
    p.set_defaults(func=run_lower)


def _progress(verbose: bool):
    state = {"t": time.perf_counter()}

    def on_stage(snap: Any, planned: list[str]) -> None:
        total = len(planned)
        print(f"[{snap.index + 1:2d}/{total}] {snap.stage:42s} {len(snap.nodes):5d} nodes  {snap.seconds:6.2f} s",
              file=sys.stderr, flush=True)
        if verbose:
            for w in snap.log:
                print(f"         warning: {w}", file=sys.stderr)

    def on_status(text: str) -> None:
        print(f"… {text}", file=sys.stderr, flush=True)
    return on_stage, on_status, state


def print_stage_table(report: dict[str, Any], out: Any = None) -> None:
    out = out or sys.stdout
    print(f"\n{'#':>2}  {'stage':42s} {'nodes':>5} {'Δ':>5}  {'+add':>4} {'-rem':>4} {'~rw':>4}  "
          f"{'cmsis':>5} {'fallbk':>6}", file=out)
    prev = None
    for st in report["stages"]:
        n = st["node_count"]
        delta = "" if prev is None else f"{n - prev:+d}"
        c = st["counts"]
        changed = "" if st.get("changed", True) else "  (unchanged)"
        print(f"{st['index']:2d}  {st['name']:42s} {n:5d} {delta:>5}  {len(st['added']):4d} {len(st['removed']):4d} "
              f"{len(st['rewritten']):4d}  {c.get('cmsis_nn', 0):5d} {c.get('portable_fallback', 0):6d}{changed}",
              file=out)
        prev = n


def group_line(members: list[dict[str, Any]]) -> str:
    """The other nodes of one explained group: "of the same op" only when they are (an nn.LSTM's group
    holds the linear, sigmoid, tanh, mul and add nodes its decomposition became); at most 12 names."""
    rest = [m["node"] for m in members[1:]]
    names = ", ".join(rest[:12]) + (f", … ({len(rest) - 12} more)" if len(rest) > 12 else "")
    ops = sorted({m["op"].split(".")[1] if m["op"].count(".") >= 2 else m["op"] for m in members})
    if len(ops) == 1:
        return f"and {len(rest)} more node(s) of the same op: {names}"
    return (f"and {len(rest)} more node(s) that the same op of yours became ({len(ops)} different ops: "
            f"{', '.join(ops[:10])}{', …' if len(ops) > 10 else ''}): {names}")


def print_fallbacks(report: dict[str, Any], out: Any = None) -> None:
    out = out or sys.stdout
    fbs = report["fallbacks"]
    if not fbs:
        print("\nNo fallbacks: every compute op runs on a CMSIS-NN kernel.", file=out)
        return
    print(f"\n{len(fbs)} fallback(s) to portable kernels:", file=out)
    groups: dict[str, list[dict[str, Any]]] = {}
    for f in fbs:                   # nodes one user op became are explained once
        groups.setdefault(f"{f.get('group') or f['node']}|{f['category']}", []).append(f)
    for members in groups.values():
        f = members[0]
        where = f"  [{f['source']}]" if f.get("source") else ""
        print(f"\n  {f['node']}  ({f['op']})  — {f['category']}{where}", file=out)
        if len(members) > 1:
            for line in textwrap.wrap(group_line(members), 92):
                print(f"      {line}", file=out)
        for line in textwrap.wrap(f["reason"], 92):
            print(f"      {line}", file=out)
        if f.get("suggestion"):
            for i, line in enumerate(textwrap.wrap(f["suggestion"], 88)):
                print(f"      {'fix: ' if i == 0 else '     '}{line}", file=out)


def print_preflight(findings: list[Any], out: Any = None) -> None:
    """The pre-flight's findings on the lowered program, as `cmlens check` prints them: on screen whether or
    not --json writes them too (MONAI's DenseNet had 23 "will fail" in the JSON and none on screen)."""
    if not findings:
        return
    from .check import print_findings

    out = out or sys.stdout
    certain = sum(1 for f in findings if f.certain)
    print(f"\npre-flight: {certain} will fail, {len(findings) - certain} may fail on the target "
          "(--keep-going mends what it can):", file=out)
    print_findings(findings, out)


def lower_job(args: argparse.Namespace, steps: tuple[str, ...] = ("lower",)) -> Any:
    """The Job `cmlens lower` runs: the options parsed once into the job's value objects."""
    from backend_core.orchestration.jobs import Job

    from .lowering_flags import schedule_options

    outputs = {k: getattr(args, k) for k in ("json", "html", "pte", "bpte") if getattr(args, k, None)}
    low = lower_request_from(args)
    report = next((outputs[k] for k in ("json", "html", "pte", "bpte") if k in outputs), None)
    schedule = schedule_options(args, report, low.target)      # beside the report; exit 2 on a bad FILE
    if schedule is not None:
        steps = tuple(dict.fromkeys((*steps, "schedule")))
    return Job(args.model, low, steps=steps, outputs=outputs or None,
               **({"schedule": schedule} if schedule is not None else {}))


def run_lower(args: argparse.Namespace) -> int:
    from backend_core.common.errors import CmlensError
    from backend_core.stages.models import parse_model_source

    try:
        parse_model_source(args.model)          # fail fast, before the 8 s import (LowerRequest checks the CPU)
        job = lower_job(args, recorded_steps(args, ("lower",)))
        check_record(args)                      # --record: a git repository, and HEAD read while it lowers
    except CmlensError as e:
        return print_error(e, verbose=args.verbose)
    on_stage, on_status, _ = _progress(args.verbose)

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "stage":
            on_stage(data["snapshot"], data["planned"])
        elif kind == "status":
            on_status(data["text"])

    done = submit(job, on_event)
    if done.status == "cancelled":              # nothing about a graph that was never finished
        for kind, path in done.files.items():
            print(f"wrote {kind} (status: cancelled): {path}", file=sys.stderr)
        return print_cancelled(cancelled_where(done))
    recorded = record_if_asked(args, done)      # --record: this lowering (or its failure) in the history store
    result = done.lowering
    if result is None or (done.error and done.error.get("step") != "lower"):
        if done.exception is None:
            print(f"error: {(done.error or {}).get('message')}", file=sys.stderr)
            return done.exit_code
        return print_error(done.exception, verbose=args.verbose)
    report = done.steps.get("lower") or result.report(None, with_graphs=False)   # the lower step's own report
    cached = " (from cache)" if result.from_cache else ""
    artefact = getattr(result, "artefact", None)       # a .pte/.bpte/.etrecord/.etdump that was read
    if artefact is not None:
        print(f"{result.model}: {artefact.kind} read in {result.seconds:.1f} s{cached} (target CPU: not "
              f"recorded in the file)")
        for note in artefact.notes:
            print(f"note: {note}")
    else:
        again = f" (not from the cache: {result.cache_note})" if result.cache_note else ""
        print(f"{result.model} → {result.options.target}, {result.options.flow} flow: {result.status} "
              f"in {result.seconds:.1f} s{cached}{again}")
        print("layout: " + ("channels_last (--channels-last: the model's 4-D weights and inputs were converted)"
                            if result.options.channels_last else "as given (no conversion)"))
    print_stage_table(report)
    if result.status == "failed":
        err = result.error or {}
        node = f" on node {err['node']}" if err.get("node") else ""
        print(f"\nerror: stage '{err.get('stage')}' failed{node}:\n  {err.get('message')}", file=sys.stderr)
        if err.get("hint"):
            print(f"  {err['hint']}", file=sys.stderr)
        if err.get("failure"):
            from backend_core.stages.fallback.pass_failure import failure_lines

            print("\n".join(["", *failure_lines(err["failure"])]), file=sys.stderr)
        if not getattr(args, "keep_going", False) and err.get("failure"):
            how = ("it makes the workaround above on a copy of the export" if err["failure"].get("workaround")
                   else "the op stays in float")
            print(f"\n  To lower the rest of the model anyway, run again with --keep-going ({how}).", file=sys.stderr)
        if args.verbose and err.get("traceback"):
            print(err["traceback"], file=sys.stderr)
        return 3
    print_fallbacks(report)
    print_preflight(result.preflight)
    changed = keep_going_summary(result.verdicts)
    if changed:
        print(f"\n{changed}")
    if "schedule" in done.steps:
        from .common import print_schedule

        print_schedule(done, sys.stdout)
    for kind, path in done.files.items():
        if kind in ("pte", "bpte", "references", "json", "html"):
            print(f"wrote {kind}: {path}")
    if args.fail_on_fallback and report["fallbacks"]:
        return 1
    return recorded

