"""The verdict on ExecuTorch's own Cortex-M test cases that hold an op with a known host-vs-CMSIS-NN
kernel difference (backend_core/target/judge/kernel_refs.py), on QEMU: each case lowered by cmlens with its
references record (the bundle's expected outputs = the lowered program; the outputs a correct target
gives when the known op is computed the target's way), all run through ONE semihosting runner, each
judged twice: without the known-difference record (the verdict before it existed) and with it.

    .venv/bin/python bench/known_mismatch_qemu.py --et-root PATH --cmsis-nn PATH [-k TEXT ...]
"""
from __future__ import annotations

import argparse
import glob
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DEFAULT_MODULES = "ops.test_avg_pool2d,ops.test_mean,models.test_nn_functional,models.test_nn_modules,models.test_resnet8"


@dataclass
class _Lowered:
    id: str
    bpte: str
    ops: list[str] = field(default_factory=list)


@dataclass
class _Run:
    outcome: str
    sim: Any
    files: dict = field(default_factory=dict)
    gaps: Any = None
    problem: str = ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--et-root", required=True)
    ap.add_argument("--cmsis-nn")
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--modules", default=DEFAULT_MODULES)
    ap.add_argument("-k", dest="select", action="append", default=[])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/cmlens-known-mismatch"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    from conformance_qemu import build_runner_for
    from kernel_mismatch import discover_in, lower_pipeline

    from backend_core.target.build.ops import read_program_ops
    from backend_core.target.simulate.semihosting import semihosting_files
    from backend_core.target.simulate.simulator import runner_for
    from backend_core.lowering.lower.references import bundle_with_references
    from backend_core.target.judge.outcome import simulated_outcome
    from backend_core.target.judge.verdict import judge_run
    from backend_core.target.judge.kernel_refs import has_known_ops
    from backend_core.target.judge.references import References, beside

    cases = [c for c in discover_in(args.modules.split(",")) if not args.select or any(s in c.id for s in args.select)]
    work = args.workdir
    (work / "bpte").mkdir(parents=True, exist_ok=True)
    lowered: list[tuple[_Lowered, References]] = []
    for case in cases:
        try:
            pipe = lower_pipeline(case, args.target)
        except Exception as exc:  # noqa: BLE001 - a case ExecuTorch cannot lower
            print(f"{case.id}: not lowered ({type(exc).__name__})")
            continue
        if not has_known_ops(pipe.final_program):
            continue
        data, refs = bundle_with_references(pipe)
        path = work / "bpte" / (case.id.replace(":", "__").replace(".", "_") + ".bpte")
        path.write_bytes(data)
        beside(path).write_bytes(refs.to_json())
        lowered.append((_Lowered(case.id, str(path), read_program_ops(data)), refs))
        print(f"lowered {case.id}: {len(refs.kernel_mismatches)} known op(s) differ on the host", flush=True)
    board, elf, _ = build_runner_for([lo for lo, _ in lowered], Path(args.et_root),
                                     Path(args.cmsis_nn) if args.cmsis_nn else None, args.target, None, print)
    rows = []
    for lo, refs in lowered:
        cwd = work / "run" / Path(lo.bpte).stem
        cwd.mkdir(parents=True, exist_ok=True)
        for old in cwd.glob("out-*.bin"):
            old.unlink()
        t0 = time.monotonic()
        res = runner_for(board).run(elf, timeout=60, semihosting_args=semihosting_files(Path(lo.bpte), cwd), cwd=cwd)
        files = {Path(p).name: Path(p) for p in glob.glob(str(cwd / "out-*.bin"))}
        run = _Run(simulated_outcome(res), res, files, None, res.problem)
        plain = References.from_dict({k: v for k, v in refs.to_dict().items()
                                      if k not in ("kernel_mismatches", "target_faithful")})
        before = judge_run(run, Path(lo.bpte), plain, refs.steps, atol=0.0, rtol=0.0, etdump=False)
        after = judge_run(run, Path(lo.bpte), refs, refs.steps, atol=0.0, rtol=0.0, etdump=False)
        t = next(iter(after.target_vs_reference), None)
        row = {"case": lo.id, "ops": [m["op"] + " @" + m["node"] for m in refs.kernel_mismatches],
               "values_off": f"{t.differing}/{t.values}" if t else "?",
               "max_steps": None if t is None or t.max_steps is None else round(t.max_steps),
               "before": before.headline(), "after": after.headline(), "known": after.known_difference,
               "qemu_s": round(time.monotonic() - t0, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\n{'case':62} {'values off':10} {'steps':5}  after")
    for r in rows:
        print(f"{r['case']:62} {r['values_off']:10} {str(r['max_steps']):5}  {r['after'][:110]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
