"""Numerics cost on MobileNetV2 with 8 inputs, as a ratio to 8 plain forward passes of the
lowered program (goal ≤ 3×). Printed, not asserted: the machine is shared.

    .venv/bin/python bench/numerics.py [MODEL] [N]

The lowering itself is not counted (it is the same for `cmlens lower`); the analysis runs the
float export, the PT2E module, edge, every runnable pass and the final program with per-layer
local reruns on every input.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    import logging

    import torch

    for name in ("", "torch", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    from backend_core.orchestration.jobs import Job, execute_job
    from backend_core.orchestration.jobs.spec import NumericsOptions
    from backend_core.analyses.numerics.analyze import RunLabels, analyze
    from backend_core.analyses.numerics.inputs import load_samples, parse_inputs

    name = sys.argv[1] if len(sys.argv) > 1 else "mv2"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    # the job's lower step keeps the host-runnable stages; its numerics step runs once here too
    res = execute_job(Job(name, steps=("lower", "numerics"), numerics=NumericsOptions(inputs=1)))
    t_lower = res.lowering.seconds
    low = res.lowering
    model = low.loaded_model
    opts = low.options
    samples = load_samples(parse_inputs(n), model.example_inputs, opts.flow)
    final_snapshot, stages = low.snapshots[-1], low.stage_programs

    mod = stages[-1].program.module()

    def plain() -> tuple[float, float]:
        with torch.no_grad():
            t0, c0 = time.perf_counter(), time.process_time()
            for x in samples:
                mod(*x)
            return time.perf_counter() - t0, time.process_time() - c0

    with torch.no_grad():
        mod(*samples[0])                                   # warm-up (first call pays op setup)
    # The machine is shared: time the baseline before and after the analysis, keep the faster.
    # Wall time swings several-fold when other jobs load the 2 cores; process CPU time (all of
    # torch's threads) does not, so both ratios are printed and CPU is the one to trust there.
    (wa, ca) = plain()
    t0, c0 = time.perf_counter(), time.process_time()
    r = analyze(stages, final_snapshot, samples, snapshots=list(low.snapshots), labels=RunLabels(model=name))
    t_num, c_num = time.perf_counter() - t0, time.process_time() - c0
    (wb, cb) = plain()
    t_plain, c_plain = min(wa, wb), min(ca, cb)
    print(f"baseline runs: wall {wa:.2f} s / {wb:.2f} s, cpu {ca:.2f} s / {cb:.2f} s")

    print(f"model {name}, {n} inputs, {len(r.layers)} layers; lowering {t_lower:.1f} s")
    print(f"plain forward of the lowered program x{n}: {t_plain:.2f} s ({t_plain / n * 1000:.0f} ms each)")
    print(f"numerics analysis:                       {t_num:.2f} s wall, {c_num:.2f} s cpu")
    for s in r.stages:
        if s.seconds:
            note = "  " + s.note if s.note and s.status != "reference" else ""
            print(f"    {s.stage:28s} {s.seconds:6.2f} s  {s.status}{note}")
    print(f"ratio (cpu time):  {c_num / c_plain:.2f}x (goal <= 3x)")
    print(f"ratio (wall time): {t_num / t_plain:.2f}x")
    worst = r.worst(3)
    print("worst (local): " + ", ".join(f"{lr.node_id} {lr.local.sqnr_db:.1f} dB" for lr in worst if lr.local))
    o = r.outputs[0]
    print(f"output: lowered vs float {o.vs_float.sqnr_db:.1f} dB, vs fake-quant {o.vs_fake_quant.sqnr_db:.1f} dB, "
          f"top-1 agreement with float {o.top1_vs_float:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
