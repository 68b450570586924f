"""Patch schedules (issue 47): total RAM (planned arena + input/output buffers outside it) of the plain
lowered program against the best patch schedule with the int8 input and with the float input, side
by side, with the extra MACs (halo recompute), the copies, the flash delta and the host bit-exactness
of each. Printed, not asserted.

    .venv/bin/python bench/schedule_ram.py [MODEL ...] [--target cortex-m55] [--grids 2,4,6,8]

Default models: mv2, mobilenet_v1_025, ds_cnn. One live lowering per model; both searches rewrite it.
The mv2 searches are slow here (26 min for both on 2 shared cores, 43 candidates): `--grids 4` is quicker.

Measured 2026-12-07 (M55, random weights): mv2 split at conv2d_default_7 in 4×4 patches, int8 input:
349.1 KiB total RAM (4.22× below 1,474.4 KiB), float input 735.0 KiB (2.01×), +9.3 % MACs; the int8 one
PASSed bit for bit on QEMU M55 against the unscheduled program's host outputs (planned buffer 357,504 B,
exactly as predicted) in 211.3 M instructions (plain mv2: 166.7 M, so +27 %: the copies cost more than
the halo MACs). mobilenet_v1_025 depthwise_conv2d_default_3 4×4 int8: PASS bit-exact on QEMU M55 and
(lowered for M7) on QEMU M7.

Since 2026-12-08 the search also proposes two-stage schedules ("A@4x4,B@4x4": search.two_stage_specs) and the
rewrite copies with the project's own cmlens::window/tiles ops: mv2 conv2d_default_3@4x4,conv2d_default_7@4x4
is 343.0 KiB with the int8 input (4.30×) and 735.0 KiB with the float one (2.01×) at +3.3 % MACs, 1.08× the
plain program's QEMU instructions (bench/schedule_instructions.py); this bench's full search has not been
run again since.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _row(name: str, plain: int, c, macs_budget: float) -> str:
    from backend_core.target.memory.fit import kib

    where = f"{c.split} {c.grid[0]}×{c.grid[1]}" if c.split else "no patches"
    return (f"  {name:14} {kib(c.total_ram):>12}  {plain / c.total_ram:5.2f}×  +{100 * c.extra_macs:5.1f} % MACs  "
            f"copies {c.copy_bytes / 1024:8.1f} KiB  flash {c.flash_delta / 1024:+8.1f} KiB  "
            f"{'bit-exact' if c.bit_exact else 'NOT CHECKED'}  {where} ({c.planner})"
            + ("" if c.extra_macs <= macs_budget else "  [over the MAC budget]"))


def main() -> int:
    for name in ("", "torch", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    from backend_core.analyses.schedule.search import GRIDS, MAX_EXTRA_MACS, pick, search
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.lowering.lower import LowerOutputs
    from backend_core.stages.pipeline import PipelineOptions
    from backend_core.target.memory.fit import kib

    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*", default=["mv2", "mobilenet_v1_025", "ds_cnn"])
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--grids", default=",".join(map(str, GRIDS)))
    args = ap.parse_args()
    grids = tuple(int(g) for g in args.grids.split(","))
    rows = []
    for model in args.models:
        t0 = time.perf_counter()
        low = lower_source(model, PipelineOptions(target=args.target), use_cache=False,
                       outputs=LowerOutputs(edge_program=True, pte=True))
        ep, inputs = low.pipeline.final_program, tuple(low.pipeline.example_inputs)
        t1 = time.perf_counter()
        res = {}
        for int8 in (True, False):
            found = search(ep, inputs, args.target, int8=int8, grids=grids)
            res[int8] = (found, pick(found))
        t2 = time.perf_counter()
        rows.append((model, res, t1 - t0, t2 - t1))
        found = res[True][0]
        print(f"{model} on {args.target}: plain total RAM {kib(found.plain.total_ram)} "
              f"(arena {kib(found.plain.arena_bytes)}); floors: layer-by-layer {kib(found.layer_floor)}, "
              f"patch {kib(found.patch_floor)} at {found.patch_floor_split} (int8 input); "
              f"lowering {t1 - t0:.0f} s, two searches {t2 - t1:.0f} s ({found.tried + res[False][0].tried} candidates)",
              flush=True)
    print(f"\nbest schedule within +{100 * MAX_EXTRA_MACS:.0f} % MACs (total RAM = arena + I/O buffers; ratio vs plain):")
    for model, res, _, _ in rows:
        plain = res[True][0].plain.total_ram
        print(f"{model}: plain {kib(plain)}")
        print(_row("int8 input", plain, res[True][1], MAX_EXTRA_MACS))
        print(_row("float input", plain, res[False][1], MAX_EXTRA_MACS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
