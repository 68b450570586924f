"""Patch schedules on the target (issue 47): QEMU instructions (-icount) of each scheduled program
against the unscheduled one, with total RAM (arena + I/O buffers outside it) and the bit-for-bit
verdict on the target, side by side. Printed, not asserted; published to bench/results.jsonl.

    CMLENS_TEST_ET_ROOT=<checkout> CMLENS_TEST_CMSIS_NN=<cmsis-nn> .venv/bin/python bench/schedule_instructions.py \
        [--target cortex-m55] [--only mv2] [--copies cmlens|portable] [--schedule MODEL:DTYPE=SPLIT ...]

Rows: mv2 with the int8 and the float input, mobilenet_v1_025 and ds_cnn with the int8 input. Each
schedule is the one `cmlens memory MODEL --schedule auto` finds (SCHEDULES below; --schedule replaces
one), rewritten with the project's own copy ops (cmlens::window/tiles) unless --copies portable. Every
program is bundled with the UNSCHEDULED program's host outputs, so a PASS is bit for bit against it.
The checkout and CMSIS-NN come from the same variables as the opt-in tests (or --et-root/--cmsis-nn).

Measured 2026-12-08 (M55, random weights, own copies; one published run, ca0f6ad): mv2 int8 input 1,474.4 ->
343.0 KiB (4.30×) at 166,742,302 -> 180,378,679 instructions (1.082×: convs on small patches +7.8 M, the
windows and tiles 3.5 M), float input 735.0 KiB (2.01×) at 1.084×, both PASS bit for bit; ds_cnn 1.00× at
0.997×. mobilenet_v1_025 in that run (dw_3@4x4, one stage): 3.12× RAM at 1.841× (+23.3 % MACs); with the
two stages now in SCHEDULES: 135.0 -> 54.0 KiB (2.50×) at 6,638,321 -> 8,432,173 (1.270×; copies 0.72 M,
+4.4 % MACs), PASS. The same mv2 schedule with portable slice/pad/cat was 1.27× (bench/schedule_ram.py)."""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (model, int8 input) -> split spec: what the search picks within the +15 % budget (bench/schedule_ram.py)
SCHEDULES = {
    ("mv2", True): "cortex_m_quantized_conv2d_default_3@4x4,cortex_m_quantized_conv2d_default_7@4x4",
    ("mv2", False): "cortex_m_quantized_conv2d_default_3@4x4,cortex_m_quantized_conv2d_default_7@4x4",
    ("mobilenet_v1_025", True): "cortex_m_quantized_conv2d_default_2@4x4,cortex_m_quantized_depthwise_conv2d_default_3@2x2",
    ("ds_cnn", True): "",
}


def _run(path: Path, target: str, args: argparse.Namespace, work: Path):
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job

    job = Job(str(path), LowerRequest(target=target), steps=("run",),
              run=RunOptions(target=target, et_root=args.et_root, cmsis_nn=args.cmsis_nn, profile=True, classes=False,
                             timeout=1800),
              out_dir=str(work))
    res = execute_job(job)
    res.raise_error()
    run = res.run
    prof = run.profile
    if prof is None or prof.total is None:
        raise SystemExit(f"{path.name}: no instruction count ({run.profile_problem or run.outcome})")
    copies = sum(o.count for o in prof.ops if any(k in (o.op or "") for k in (
        "window.out", "tiles.out", "slice_copy", "cat.out", "pad.out", "clone_dim_order")))
    by_op: dict[str, int] = {}
    for o in prof.ops:
        by_op[o.op] = by_op.get(o.op, 0) + o.count
    print(f"  {path.name}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(by_op.items(), key=lambda kv: -kv[1])[:8])
          + f"; Method::execute {prof.total:,}", flush=True)
    return run.outcome, prof.total, copies, run.summary()


def _bundle(program, inputs, expected, planner: str = "greedy") -> bytes:
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer

    from backend_core.analyses.schedule.measure import executorch_program
    from backend_core.stages.pipeline.program_files import bundled_program

    bp = bundled_program(executorch_program(program, planner), list(inputs), list(expected))
    return bytes(serialize_from_bundled_program_to_flatbuffer(bp))


_LOWERED: dict[str, object] = {}
_PLAIN: dict[str, tuple] = {}


def measure(model: str, int8: bool, spec: str, args: argparse.Namespace, work: Path) -> dict:
    from backend_core.analyses.schedule.measure import measure_pte, program_macs, serialise
    from backend_core.analyses.schedule.rewrite import schedule_program
    from backend_core.analyses.schedule.search import _outputs, bit_exact, host_inputs
    from backend_core.lowering.lower import LowerOutputs
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.orchestration.jobs.steps.schedule import scheduled_bundle
    from backend_core.stages.pipeline import PipelineOptions

    if model not in _LOWERED:          # one live lowering per model (a cached result has no live program)
        _LOWERED[model] = lower_source(model, PipelineOptions(target=args.target), use_cache=False,
                                       outputs=LowerOutputs(edge_program=True, pte=True))
    low = _LOWERED[model]
    ep, inputs = low.pipeline.final_program, tuple(low.pipeline.example_inputs)
    expected = _outputs(ep, inputs)
    r = schedule_program(ep, spec, (4, 4), args.target, int8=int8, copies=args.copies)
    quant = r.input_quant.to_dict() if r.input_quant else None
    host = bit_exact(expected, r.program, host_inputs(r.program, inputs, quant))
    plain_ram, ram = measure_pte(serialise(ep)).total_ram, measure_pte(serialise(r.program)).total_ram
    tag = f"{model}-{'int8' if int8 else 'float'}"
    plain_bpte, sched_bpte = work / f"{tag}.plain.bpte", work / f"{tag}.scheduled.bpte"
    sched_bpte.write_bytes(scheduled_bundle(r.program, "greedy", inputs, quant, expected))
    t0 = time.perf_counter()
    if model not in _PLAIN:            # the unscheduled program runs once per model
        plain_bpte.write_bytes(_bundle(ep, inputs, expected))
        _PLAIN[model] = _run(plain_bpte, args.target, args, work / f"{tag}-plain")
    p_out, p_ins, _, _ = _PLAIN[model]
    s_out, s_ins, s_copies, s_sum = _run(sched_bpte, args.target, args, work / f"{tag}-scheduled")
    return {"model": model, "input": "int8" if int8 else "float", "spec": spec or "(int8 input only)",
            "plain_ram": plain_ram, "ram": ram, "extra_macs": program_macs(r.program) / program_macs(ep) - 1,
            "plain_instr": p_ins, "instr": s_ins, "copy_instr": s_copies, "plain_outcome": p_out, "outcome": s_out,
            "host_exact": host,
            "windows": r.windows, "tiles": r.tiles, "slices": r.slices, "cats": r.cats, "pads": r.pads,
            "summary": s_sum, "run_s": time.perf_counter() - t0}


def main() -> int:
    for name in ("", "torch", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--only", default="", help="comma-separated models")
    ap.add_argument("--copies", default="cmlens", choices=("cmlens", "portable"))
    ap.add_argument("--schedule", action="append", default=[], help="MODEL:int8|float=SPLIT")
    ap.add_argument("--et-root", default=os.environ.get("CMLENS_TEST_ET_ROOT"))
    ap.add_argument("--cmsis-nn", default=os.environ.get("CMLENS_TEST_CMSIS_NN"))
    ap.add_argument("--no-publish", action="store_true")
    args = ap.parse_args()
    if not args.et_root:
        print("Set CMLENS_TEST_ET_ROOT (or --et-root) to an ExecuTorch checkout: the bench runs QEMU.", file=sys.stderr)
        return 2
    schedules = dict(SCHEDULES)
    for s in args.schedule:
        key, _, spec = s.partition("=")
        model, _, dtype = key.partition(":")
        schedules[(model, dtype != "float")] = spec
    only = {m for m in args.only.split(",") if m}
    from backend_core.target.memory.fit import kib

    rows = []
    with tempfile.TemporaryDirectory(prefix="cmlens-bench-sched-") as tmp:
        for (model, int8), spec in schedules.items():
            if only and model not in only:
                continue
            row = measure(model, int8, spec, args, Path(tmp))
            rows.append(row)
            print(f"{row['model']:17} {row['input']:5}  RAM {kib(row['plain_ram']):>12} -> {kib(row['ram']):>12} "
                  f"({row['plain_ram'] / row['ram']:.2f}×)  instructions {row['plain_instr']:,} -> {row['instr']:,} "
                  f"({row['instr'] / row['plain_instr']:.3f}×; copies {row['copy_instr']:,})  "
                  f"+{100 * row['extra_macs']:.1f} % MACs  "
                  f"plain {row['plain_outcome']}, scheduled {row['outcome']} on QEMU {args.target} "
                  f"(host {'bit-exact' if row['host_exact'] else 'DIFFERS'})  {row['spec']} [{args.copies}: "
                  f"{row['windows']} windows, {row['tiles']} tiles, {row['slices']} slices, {row['cats']} cats, "
                  f"{row['pads']} pads]", flush=True)
    if rows and not args.no_publish and all(r["outcome"] == "PASS" for r in rows):
        from results import publish

        worst = max(r["instr"] / r["plain_instr"] for r in rows)
        cells = "; ".join(f"{r['model']} {r['input']} {r['plain_ram'] / r['ram']:.2f}× RAM at "
                          f"{r['instr'] / r['plain_instr']:.3f}× instr" for r in rows)
        publish("schedule_instructions", what=f"patch schedules on QEMU {args.target} ({args.copies} copies): "
                "RAM and -icount instructions vs the unscheduled program, bit for bit", result=cells,
                goal="≤ 1.15× instructions, PASS bit for bit",
                figures={"worst_instr_ratio": worst,
                         **{f"{r['model']}_{r['input']}_instr_ratio": r["instr"] / r["plain_instr"] for r in rows},
                         **{f"{r['model']}_{r['input']}_ram_ratio": r["plain_ram"] / r["ram"] for r in rows}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
