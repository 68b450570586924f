"""How long the patch-schedule search takes (issue 47, Done-when: "On mv2 [the search] takes at most the
time of 3 plain lowerings"): the plain lowering's wall time and the `--schedule auto` search's (int8
input, the step's own search() on the live lowered program, host checks included) side by side in one
run, their ratio, and the chosen schedule's RAM. Printed and published (bench/results.py).

    .venv/bin/python bench/schedule_search.py [MODEL ...] [--target cortex-m55] [--no-publish]

Default models: mv2, mobilenet_v1_025. Both times are measured in the same process under the same load
(the machine's other jobs slow both alike), so the ratio is the figure; the seconds are the context.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def measure(model: str, target: str) -> dict:
    from backend_core.analyses.schedule.search import pick, search
    from backend_core.lowering.lower import LowerOutputs
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.stages.pipeline import PipelineOptions

    t0 = time.perf_counter()
    low = lower_source(model, PipelineOptions(target=target), use_cache=False,
                       outputs=LowerOutputs(edge_program=True, pte=True))
    t1 = time.perf_counter()
    ep, inputs = low.pipeline.final_program, tuple(low.pipeline.example_inputs)
    found = search(ep, inputs, target, int8=True, check="chosen")     # as the schedule step searches
    chosen = pick(found)
    t2 = time.perf_counter()
    assert chosen is not None and chosen.bit_exact, "auto must offer a host-checked schedule"
    return {"model": model, "lower_s": t1 - t0, "search_s": t2 - t1, "ratio": (t2 - t1) / (t1 - t0),
            "tried": found.tried, "skipped": found.skipped, "plain_ram": found.plain.total_ram,
            "ram": chosen.total_ram, "ram_need": chosen.measured.ram_need, "extra_macs": chosen.extra_macs,
            "where": f"{chosen.split} {chosen.grid[0]}×{chosen.grid[1]} ({chosen.planner})" if chosen.split
            else f"no patches ({chosen.planner})"}


def main() -> int:
    for name in ("", "torch", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    from backend_core.target.memory.fit import kib

    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*", default=["mv2", "mobilenet_v1_025"])
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--no-publish", action="store_true")
    args = ap.parse_args()
    rows = []
    for model in args.models:
        r = measure(model, args.target)
        rows.append(r)
        print(f"{model:17} lowering {r['lower_s']:6.1f} s  search {r['search_s']:6.1f} s  = {r['ratio']:4.2f} "
              f"lowerings  ({r['tried']} candidates, {r['skipped']} not serialised)  chosen: total RAM "
              f"{kib(r['ram'])} (plain {kib(r['plain_ram'])}, {r['plain_ram'] / r['ram']:.2f}×), RAM need "
              f"{kib(r['ram_need'])}, +{100 * r['extra_macs']:.1f} % MACs, {r['where']}, int8 input", flush=True)
    if rows and not args.no_publish:
        from results import publish

        cells = "; ".join(f"{r['model']} {r['search_s']:.0f} s = {r['ratio']:.2f}× its lowering "
                          f"({r['plain_ram'] / r['ram']:.2f}× less RAM)" for r in rows)
        publish("schedule_search", what=f"`--schedule auto` search time (int8 input, {args.target}) ÷ the plain "
                "lowering's, same process", result=cells, goal="mv2 ≤ 3 lowerings",
                figures={**{f"{r['model']}_ratio": r["ratio"] for r in rows},
                         **{f"{r['model']}_search_s": r["search_s"] for r in rows},
                         **{f"{r['model']}_lower_s": r["lower_s"] for r in rows},
                         **{f"{r['model']}_ram_bytes": float(r["ram"]) for r in rows}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
