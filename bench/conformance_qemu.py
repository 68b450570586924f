"""Conformance on the target (issues 9, 21): ExecuTorch's own Cortex-M test cases (`McuTestCase`s of
executorch/backends/cortex_m/test/{ops,models}), each lowered by cmlens, checked by the pre-flight,
and run on QEMU Cortex-M55 through ONE semihosting runner (built once for the union of the cases'
portable ops; each case's .bpte is read from the host, so no rebuild per case). Every case runs,
including those the pre-flight says will fail: that is how a prediction is confirmed.

    .venv/bin/python bench/conformance_qemu.py --et-root PATH --cmsis-nn PATH [--workdir DIR] [-k TEXT]

The table separates the outcomes:
  PASS            no "will fail", and the run passed
  CONFIRMED       the pre-flight said "will fail" and the run failed (predicted and confirmed)
  FALSE ALARM     the pre-flight said "will fail" but the run passed
  FAIL            no "will fail", and the target's outputs differed (a "may fail" may have foreseen it)
  CRASHED         no "will fail", and the run faulted / timed out / stopped with an error
  NOT LOWERED     ExecuTorch's pipeline could not lower the case
Each run's outputs are also compared with the lowered program run on the host (bit-exact is what a
correct target gives) and with the fake-quant model (in output quantization steps).
Exit status 1 on any FALSE ALARM or any CRASHED the pre-flight did not foresee (not even as "may fail").
Without a checkout it lowers and checks only (CI has none)."""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from conformance_cases import Lowered, discover, lower_all, refresh_preflight


@dataclass
class Row:
    id: str
    verdict: str                   # see the module docstring (LOWERED / PREDICTED when nothing ran)
    outcome: str = ""              # what the runner did: PASS / FAIL / FAULT / TIMEOUT / NO RESULT
    rule: str = ""                 # the pre-flight rule ("will fail", or the "may fail" that foresaw it)
    reason: str = ""
    run_s: float = 0.0
    lower_s: float = 0.0
    same_line: bool | None = None  # CONFIRMED: did ExecuTorch log the very check the rule cites?
    foreseen: bool = False         # FAIL / CRASHED: a "may fail" finding foresaw it
    vs_lowered: str = ""           # target outputs against the lowered program on the host
    vs_fake_quant: str = ""        # ... and against the fake-quant model
    errors: list[str] = field(default_factory=list)


def _certain(low: Lowered) -> list[dict]:
    return [f for f in low.preflight if f.get("certainty") == "will fail"]


def _may(low: Lowered) -> list[dict]:
    return [f for f in low.preflight if f.get("certainty") != "will fail"]


def build_runner_for(cases: list[Lowered], et_root: Path, cmsis: Path | None, target: str,
                     cache: Path | None, log) -> tuple[object, Path, float]:
    """Libraries (cached) + one semihosting runner for every portable op the checkout has."""
    from backend_core.common.boards.table import board_for
    from backend_core.target.toolchain.checkout import inspect_checkout
    from backend_core.target.build.libraries import EtLibRequest, ensure_libraries
    from backend_core.target.build.ops import OP_YAMLS, check_ops
    from backend_core.target.build.runner import RunnerRequest, build_runner

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


def run_case(board, elf: Path, low: Lowered, workdir: Path, timeout: float) -> tuple:
    """(verdict, QEMU seconds, error lines, detail, References | None). The verdict is ExecuTorch's own
    comparison (host side, conformance_compare.py: qtol x scale against the bundle's expected outputs)
    when the runner wrote its outputs, PASS also when the outputs equal the lowered program bit for bit;
    else what the runner did."""
    import shutil

    from backend_core.target.simulate.semihosting import semihosting_files
    from backend_core.target.judge.outcome import simulated_outcome
    from backend_core.target.simulate.simulator import runner_for
    from conformance_cases import references_path
    from conformance_compare import against_references, compare, module_qtol

    cwd = workdir / "run" / Path(low.bpte).stem
    shutil.rmtree(cwd, ignore_errors=True)
    argv = semihosting_files(Path(low.bpte), cwd)
    sim = runner_for(board)
    res = sim.run(elf, timeout=timeout, semihosting_args=argv, cwd=cwd)
    errs = [e for e in res.report.errors if "BundleIO" not in e and "mismatched" not in e
            and "Bundle verification" not in e][:6] + [f.summary() for f in res.report.faults][:2]
    runner = simulated_outcome(res)
    bundle_io = next((t.passed for t in res.report.tests), None)
    ran_to_end = res.report.tests or any("Model run:" in line for line in res.uart)
    data = Path(low.bpte).read_bytes()
    cmp = compare(cwd, data, module_qtol(_module_file(low.id))) if ran_to_end else None
    refs = against_references(cwd, data, references_path(workdir, low.id)) if ran_to_end else None
    if cmp is not None:
        verdict = "PASS" if cmp.ok or (refs is not None and refs.exact) else "FAIL"
        detail = cmp.detail + ("" if bundle_io is None else
                               f"; runner's BundleIO (atol/rtol 0.01): {'PASS' if bundle_io else 'FAIL'}")
        return verdict, res.elapsed_s, errs if verdict != "PASS" else [], detail, refs
    return runner if runner not in ("PASS", "FAIL") else "NO RESULT", res.elapsed_s, errs, res.problem, None


def classify(low: Lowered, outcome: str | None, errors: list[str] = ()) -> Row:
    row = Row(low.id, "", lower_s=low.seconds)
    certain, may = _certain(low), _may(low)
    if low.status != "lowered":
        row.verdict, row.reason = "NOT LOWERED", low.reason
        return row
    top = certain[0] if certain else (may[0] if may else None)
    if top is not None:
        row.rule = top["rule"] if certain else f"{top['rule']} (may fail)"
        row.reason = f"{top['node']}: {top['message']}"
    if outcome is None:
        row.verdict = "PREDICTED" if certain else "LOWERED"
        return row
    row.outcome = outcome
    if certain:
        row.verdict = "FALSE ALARM" if outcome == "PASS" else "CONFIRMED"
        if row.verdict == "CONFIRMED":
            row.same_line = logged_at_cited_line(certain, errors) or None
        return row
    row.foreseen = bool(may)
    if outcome == "PASS":
        row.verdict, row.rule, row.reason = "PASS", "", ""
    elif outcome == "FAIL":
        row.verdict = "FAIL"
    else:
        row.verdict = "CRASHED"
    return row


_LOGGED = re.compile(r"executorch:([\w.]+):(\d+) ")


def logged_at_cited_line(findings: list[dict], errors: list[str]) -> bool:
    """ExecuTorch logged an error from the file and line (within the statement's few lines) a rule cites."""
    cited = []
    for f in findings:
        name, _, line = Path(f.get("source", "")).name.partition(":")
        if line.isdigit():
            cited.append((name, int(line)))
    for e in errors:
        for m in _LOGGED.finditer(e):
            if any(m.group(1) == n and abs(int(m.group(2)) - ln) <= 3 for n, ln in cited):
                return True
    return False


ORDER = ("PASS", "CONFIRMED", "FALSE ALARM", "FAIL", "CRASHED", "NOT LOWERED", "PREDICTED", "LOWERED")


def gate_problems(rows: list[Row]) -> list[Row]:
    """The rows that make the bench exit 1: false alarms and crashes nothing foresaw."""
    return [r for r in rows if r.verdict == "FALSE ALARM" or (r.verdict == "CRASHED" and not r.foreseen)]


def print_table(rows: list[Row], total_s: float, out=print) -> None:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    out("\n== conformance: ExecuTorch Cortex-M test cases on QEMU ==")
    out("  ".join(f"{k}: {counts[k]}" for k in ORDER if k in counts) + f"  (total {len(rows)})")
    for verdict in ORDER[1:-1]:                 # PASS and LOWERED (nothing ran) are only counted
        group = [r for r in rows if r.verdict == verdict]
        if not group:
            continue
        out(f"-- {verdict} ({len(group)})")
        for r in group:
            extra = f" [{r.rule}]" if r.rule else ""
            if r.outcome and verdict not in ("FAIL",):
                extra += f" [run: {r.outcome}" + (", at the cited line" if r.same_line else "") + "]"
            if verdict in ("FAIL", "CRASHED"):
                extra += " [foreseen as may fail]" if r.foreseen else " [UNFORESEEN]"
            out(f"  {r.id}{extra}: {r.reason[:220]}")
            if r.vs_lowered:
                out(f"              | vs lowered program on the host: {r.vs_lowered[:160]}")
                out(f"              | vs fake-quant model: {r.vs_fake_quant[:160]}")
            for e in r.errors[:3]:
                out(f"              | {e[:200]}")
    exact = [r for r in rows if r.vs_lowered and "steps" not in r.vs_lowered and "differ" not in r.vs_lowered]
    compared = [r for r in rows if r.vs_lowered]
    if compared:
        out(f"outputs bit-identical to the lowered program on the host: {len(exact)} of {len(compared)} runs")
    runs = [r.run_s for r in rows if r.run_s]
    lows = [r.lower_s for r in rows if r.lower_s]
    out(f"time: total {total_s:.0f} s; per case median: lower {statistics.median(lows) if lows else 0:.2f} s, "
        f"QEMU run {statistics.median(runs) if runs else 0:.2f} s")
    bad = gate_problems(rows)
    out(f"gate: {'FAILED' if bad else 'ok'}: {sum(r.verdict == 'FALSE ALARM' for r in rows)} false alarm(s), "
        f"{sum(r.verdict == 'CRASHED' and not r.foreseen for r in rows)} unforeseen crash(es)")


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
            log(f"[{i}/{len(ok)}] {c.id}: {o[0]} {o[1]:.2f} s" + (f" {o[3]}" if o[3] else "")
                + (f"; vs lowered program: {o[4].lowered}" if o[4] is not None else ""))
    else:
        log("no ExecuTorch checkout (--et-root): lowering and pre-flight only")
    rows = []
    for c in lowered:
        o = outcomes.get(c.id)
        row = classify(c, o[0] if o else None, o[2] if o else [])
        if o:
            row.run_s, row.errors = o[1], o[2]
            if o[4] is not None:
                row.vs_lowered, row.vs_fake_quant = o[4].lowered, o[4].fake_quant
            if row.verdict in ("CRASHED", "FAIL") and not row.foreseen:
                row.reason = o[3] or "; ".join(o[2][:2])
        rows.append(row)
    print_table(rows, time.monotonic() - t0)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if gate_problems(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
