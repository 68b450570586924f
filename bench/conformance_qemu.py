"""Conformance on the target (issue 9): ExecuTorch's own Cortex-M test cases (`McuTestCase`s of
executorch/backends/cortex_m/test/{ops,models}), each lowered by cmlens, checked by the pre-flight,
and run on QEMU Cortex-M55 through ONE semihosting runner (built once for the union of the cases'
portable ops; each case's .bpte is read from the host, so no rebuild per case).

    .venv/bin/python bench/conformance_qemu.py --et-root PATH --cmsis-nn PATH [--workdir DIR] [-k TEXT]

Prints a table: PASS / FAIL (outputs differ) / PREDICTED (the pre-flight said "will fail", with the
rule) / CRASHED (a fault, a timeout, a runner error the pre-flight did not foresee) / NOT LOWERED,
then the total time and the per-case median. Without a checkout it lowers and checks only (CI has none)."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from conformance_cases import Lowered, discover, lower_all, refresh_preflight  # noqa: E402


@dataclass
class Row:
    id: str
    verdict: str                   # PASS / FAIL / PREDICTED / CRASHED / NOT LOWERED / LOWERED (no run)
    outcome: str = ""              # what the runner did: PASS / FAIL / FAULT / TIMEOUT / NO RESULT
    rule: str = ""                 # the pre-flight rule when predicted
    reason: str = ""
    run_s: float = 0.0
    lower_s: float = 0.0
    confirmed: bool | None = None  # PREDICTED: did the run fail as predicted?
    same_line: bool | None = None  # PREDICTED + failed: did ExecuTorch log the very check the rule cites?
    errors: list[str] = field(default_factory=list)


def _certain(low: Lowered) -> list[dict]:
    return [f for f in low.preflight if f.get("certainty") == "will fail"]


def _may(low: Lowered) -> list[dict]:
    return [f for f in low.preflight if f.get("certainty") != "will fail"]


def build_runner_for(cases: list[Lowered], et_root: Path, cmsis: Path | None, target: str,
                     cache: Path | None, log) -> tuple[object, Path, float]:
    """Libraries (cached) + one semihosting runner for every portable op the checkout has."""
    from backend_core.firmware.boards import board_for
    from backend_core.firmware.checkout import inspect_checkout
    from backend_core.firmware.et_build import EtLibRequest, ensure_libraries
    from backend_core.firmware.et_ops import OP_YAMLS, check_ops
    from backend_core.firmware.runner_build import RunnerRequest, build_runner

    co = inspect_checkout(et_root)
    board = board_for(target, "qemu")
    ops = sorted({op for c in cases for op in c.ops})
    have = check_ops(ops, {lib: co.root / rel for lib, rel in OP_YAMLS.items()})
    usable = [op for op in ops if op not in have.missing]
    start = time.monotonic()
    libs = ensure_libraries(EtLibRequest(co.root, board.cpu, "Release", cmsis, cache_root=cache,
                                         commit=co.commit, etdump=True))
    log(f"libraries: {'cached' if libs.cached else 'built'} in {time.monotonic() - start:.1f} s")
    req = RunnerRequest(board, libs, model=None, ops=usable, semihosting=True,
                        build_root=None if cache is None else cache / "runner")
    start = time.monotonic()
    rb = build_runner(req)
    build_s = time.monotonic() - start
    log(f"runner: {len(usable)} ops ({len(have.missing)} missing in the checkout: "
        f"{', '.join(have.missing) or 'none'}), build {build_s:.1f} s{' (reused)' if rb.reused else ''}: {rb.elf}")
    return board, rb.elf, build_s


def _module_file(case_id: str) -> str:
    import importlib.util

    short = case_id.split(":", 1)[0]
    spec = importlib.util.find_spec("executorch.backends.cortex_m.test." + short)
    return str(spec.origin) if spec and spec.origin else ""


def run_case(board, elf: Path, low: Lowered, workdir: Path, timeout: float) -> tuple[str, float, list[str], str]:
    """(verdict, QEMU seconds, error lines, detail). The verdict is ExecuTorch's own comparison (host
    side, conformance_compare.py) when the runner wrote its outputs, else what the runner did."""
    import shutil

    from backend_core.firmware.semihosting import semihosting_files
    from backend_core.firmware.simulator import runner_for
    from conformance_compare import compare, module_qtol

    cwd = workdir / "run" / Path(low.bpte).stem
    shutil.rmtree(cwd, ignore_errors=True)
    argv = semihosting_files(Path(low.bpte), cwd)
    sim = runner_for(board)
    res = sim.run(elf, timeout=timeout, semihosting_args=argv, cwd=cwd)
    errs = [e for e in res.report.errors if "BundleIO" not in e and "mismatched" not in e
            and "Bundle verification" not in e][:6] + [f.summary() for f in res.report.faults][:2]
    runner = res.outcome
    bundle_io = next((t.passed for t in res.report.tests), None)
    ran_to_end = res.report.tests or any("Model run:" in line for line in res.uart)
    cmp = compare(cwd, Path(low.bpte).read_bytes(), module_qtol(_module_file(low.id))) if ran_to_end else None
    if cmp is not None:
        verdict = "PASS" if cmp.ok else "FAIL"
        detail = cmp.detail + ("" if bundle_io is None else
                               f"; runner's BundleIO (atol/rtol 0.01): {'PASS' if bundle_io else 'FAIL'}")
        return verdict, res.elapsed_s, errs if not cmp.ok else [], detail
    return runner if runner not in ("PASS", "FAIL") else "NO RESULT", res.elapsed_s, errs, res.problem


def classify(low: Lowered, outcome: str | None, errors: list[str] = ()) -> Row:
    row = Row(low.id, "", lower_s=low.seconds)
    certain = _certain(low)
    if low.status != "lowered":
        row.verdict, row.reason = "NOT LOWERED", low.reason
        return row
    if certain:
        row.verdict, row.rule = "PREDICTED", certain[0]["rule"]
        row.reason = f"{certain[0]['node']}: {certain[0]['message']}"
    if outcome is None:
        row.verdict = row.verdict or "LOWERED"
        return row
    row.outcome = outcome
    if certain:
        row.confirmed = outcome != "PASS"
        cited = {Path(f["source"]).name for f in certain if f.get("source")}
        row.same_line = any(f"executorch:{c} " in e for c in cited for e in errors) if row.confirmed else None
    elif outcome == "PASS":
        row.verdict = "PASS"
    elif _may(low):                     # a "may fail" finding foresaw it
        may = _may(low)[0]
        row.verdict, row.rule, row.confirmed = "PREDICTED", f"{may['rule']} (may fail)", True
        row.reason = f"{may['node']}: {may['message']}"
    elif outcome == "FAIL":
        row.verdict = "FAIL"
    else:
        row.verdict = "CRASHED"
    return row


def print_table(rows: list[Row], total_s: float, out=print) -> None:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    out("\n== conformance: ExecuTorch Cortex-M test cases on QEMU ==")
    out("  ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + f"  (total {len(rows)})")
    for r in rows:
        if r.verdict == "PASS":
            continue
        extra = ""
        if r.verdict == "PREDICTED":
            extra = f" [{r.rule}; run: {r.outcome or 'not run'}" + (
                "" if r.confirmed is None else (", FALSE ALARM: it passed" if not r.confirmed else
                                                ", confirmed" + (" at the cited line" if r.same_line else ""))) + "]"
        elif r.outcome:
            extra = f" [run: {r.outcome}]"
        out(f"  {r.verdict:11} {r.id}{extra}: {r.reason[:220]}")
        for e in r.errors[:3]:
            out(f"              | {e[:200]}")
    runs = [r.run_s for r in rows if r.run_s]
    lows = [r.lower_s for r in rows if r.lower_s]
    out(f"time: total {total_s:.0f} s; per case median: lower {statistics.median(lows) if lows else 0:.2f} s, "
        f"QEMU run {statistics.median(runs) if runs else 0:.2f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--et-root", default=os.environ.get("EXECUTORCH_ROOT"))
    ap.add_argument("--cmsis-nn", default=os.environ.get("CMSIS_NN_PATH"))
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/cmlens-conformance"))
    ap.add_argument("--cache-dir", type=Path, help="cmlens library/runner cache (default: the user's)")
    ap.add_argument("-k", dest="select", default="", help="only cases whose id contains this text")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--redo", action="store_true", help="lower again even when a result is stored")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--stored-only", action="store_true", help="use only cases an earlier run lowered")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    log = lambda s: print(s, flush=True)  # noqa: E731

    cases, broken = discover(args.select)
    log(f"{len(cases)} McuTestCases found ({len(broken)} test modules do not import: "
        + "; ".join(f"{m}: {r}" for m, r in broken) + ")")
    lowered = list(lower_all(cases, args.workdir / args.target, args.target, redo=args.redo,
                              stored_only=args.stored_only, log=log))
    outcomes: dict[str, tuple] = {}
    lowered = [refresh_preflight(c, args.workdir / args.target, args.et_root) for c in lowered]
    if args.et_root:
        ok = [c for c in lowered if c.status == "lowered"]
        board, elf, _ = build_runner_for(ok, Path(args.et_root), Path(args.cmsis_nn) if args.cmsis_nn else None,
                                         args.target, args.cache_dir, log)
        for i, c in enumerate(ok, 1):
            outcomes[c.id] = run_case(board, elf, c, args.workdir / args.target, args.timeout)
            o = outcomes[c.id]
            log(f"[{i}/{len(ok)}] {c.id}: {o[0]} {o[1]:.2f} s" + (f" {o[3]}" if o[3] else ""))
    else:
        log("no ExecuTorch checkout (--et-root): lowering and pre-flight only")
    rows = []
    for c in lowered:
        o = outcomes.get(c.id)
        row = classify(c, o[0] if o else None, o[2] if o else [])
        if o:
            row.run_s, row.errors = o[1], o[2]
            if row.verdict in ("CRASHED", "FAIL") and not row.reason:
                row.reason = o[3] or "; ".join(o[2][:2])
        rows.append(row)
    print_table(rows, time.monotonic() - t0)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
