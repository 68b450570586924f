"""Accuracy evaluation speed (issue 25): samples per second of float, PT2E fake-quant and the lowered
program on the host, the wall time of a whole `cmlens evaluate` job, and what limits the lowered program.
Printed, not asserted: the machine is shared.

    .venv/bin/python bench/accuracy.py [MODEL] [--calib DIR]

Default MODEL digits_cnn (its 450 held-out images). The job is lower + evaluate (one lowering, kept
stages); then the evaluation runs once more on the same lowering (warm: no first-call costs), and the
lowered program is profiled on 50 samples to show where its host time goes.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    import logging

    import torch

    for name in ("", "torch", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    from backend_core.analyses.accuracy import EvalPrograms, evaluate, load_eval_set
    from backend_core.analyses.accuracy.flips import sqnr_profile
    from backend_core.analyses.accuracy.programs import one_thread
    from backend_core.orchestration.jobs import Job, LowerRequest, execute_job

    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default="digits_cnn")
    ap.add_argument("--calib", default=None)
    args = ap.parse_args()
    print(f"torch threads: {torch.get_num_threads()}")

    t0 = time.perf_counter()
    res = execute_job(Job(args.model, LowerRequest(calib=args.calib), steps=("lower", "evaluate")))
    wall = time.perf_counter() - t0
    res.raise_error()
    ev = res.steps["evaluate"]
    print(f"{args.model}: whole job (import + lower + evaluate) {wall:.1f} s; lower step "
          f"{res.timings['lower_s']:.1f} s, evaluate step {res.timings['evaluate_s']:.1f} s on {ev['samples']} samples "
          f"({len(ev.get('flipped', []))} flips traced)")
    _speed("first evaluation (cold: first-call costs included)", ev)

    programs = EvalPrograms.from_lowering(res.lowering)
    data = load_eval_set(programs.loaded, programs.example_inputs)
    t0 = time.perf_counter()
    warm = evaluate(programs, data)
    print(f"second evaluation on the same lowering: {time.perf_counter() - t0:.1f} s")
    _speed("second evaluation (warm)", warm)
    for k in ("float", "fake_quant", "lowered"):
        m = warm["models"][k]
        if "top1" in m:
            print(f"  {k:11} top-1 {100 * m['top1']:.2f} %  agreement with float {100 * m['agreement']:.2f} %")

    samples = [s.inputs for s in data.samples[:8]]
    t0 = time.perf_counter()
    for s in samples:
        sqnr_profile(programs, s)
    print(f"per-sample numerics trace of a flip: {(time.perf_counter() - t0) / len(samples) * 1000:.0f} ms/sample")

    fn = programs.lowered.module()
    xs = [s.inputs for s in data.samples[:50]]
    fn(*xs[0])
    prof = cProfile.Profile()
    with torch.no_grad(), one_thread():
        prof.enable()
        for x in xs:
            fn(*x)
        prof.disable()
    st = pstats.Stats(prof)
    total = st.total_tt
    rows = [(v[3], f"{Path(k[0]).name}:{k[2]}") for k, v in st.stats.items()
            if "cortex_m" in k[0] and k[2].endswith(("_impl", "requantize_cmsis"))]
    print(f"lowered program on the host, 50 samples under cProfile: {total:.2f} s; cumulative share per reference "
          "kernel (ExecuTorch's Python implementations of the cortex_m ops):")
    for cum, name in sorted(rows, reverse=True)[:6]:
        print(f"  {100 * cum / total:5.1f} %  {name}")
    return 0


def _speed(title: str, ev: dict) -> None:
    print(title + ":")
    for k, s in ev["speed"].items():
        print(f"  {k:11} {s['samples_per_s']:>9,.1f} samples/s  ({s['seconds']:.2f} s{', batched' if s['batched'] else ''})")


if __name__ == "__main__":
    sys.exit(main())
