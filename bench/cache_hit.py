"""A lowering cache hit now re-checks every recorded file (issue 20): how long does a hit take?
Goal: ≤ 0.5 s. Printed, never asserted.

A model split over files (tests/helpers/split_model.py: model.py, helper.py, a package, a data file) and,
optionally, a zoo model are lowered once into a fresh cache; then, in a fresh process each time (as
`cmlens lower` and the GUI's worker run it), `lower()` is timed from the call to its return (key, entry
lookup, recorded-file check, unpickling, streaming the stages), plus the recorded-file check alone and
the whole `cmlens lower` command's wall time for reference (interpreter start and imports included).

Run: .venv/bin/python bench/cache_hit.py [--model ds_cnn] [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOAL_S = 0.5

CHILD = """
import json, sys, time
t0 = time.perf_counter()
from backend_core.stages.cache import ResultCache, cache_key
from backend_core.lowering.lower import lower
from backend_core.stages.models import parse_model_source
from backend_core.stages.pipeline.stages import PipelineOptions
t1 = time.perf_counter()
res = lower(sys.argv[1], PipelineOptions())
t2 = time.perf_counter()
key = cache_key(parse_model_source(sys.argv[1]).fingerprint(), PipelineOptions().key())
deps = ResultCache().dependencies(key)
t3 = time.perf_counter()
changes = [d.change() for d in deps]
t4 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "hit": t2 - t1, "from_cache": res.from_cache, "deps": len(deps),
                  "check": t4 - t3, "fallbacks": len(res.fallbacks())}))
"""


def child(model: str, env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, model], capture_output=True, text=True, env=env,
                         cwd=ROOT, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", action="append", default=[], help="also a zoo model (e.g. ds_cnn, mv2)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from tests.helpers.split_model import write_split_model

    work = Path(tempfile.mkdtemp(prefix="cmlens-hit-"))
    env = {**os.environ, "CMLENS_CACHE": str(work / "cache")}
    models = [str(write_split_model(work / "split"))] + args.model
    for model in models:
        t0 = time.perf_counter()
        first = child(model, env)                              # cold: lowers and stores
        cold = time.perf_counter() - t0
        assert not first["from_cache"], first
        runs = [child(model, env) for _ in range(args.repeat)]
        assert all(r["from_cache"] for r in runs), runs
        walls = []
        for _ in range(min(3, args.repeat)):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "app.cli", "lower", model], capture_output=True, env=env,
                           cwd=ROOT, check=True)
            walls.append(time.perf_counter() - t)
        hit = statistics.median(r["hit"] for r in runs)
        print(f"{Path(model).name if '/' in model else model}: cold lowering {cold:.1f} s; "
              f"hit {hit:.3f} s median (max {max(r['hit'] for r in runs):.3f}) over {len(runs)} fresh processes, "
              f"{runs[0]['deps']} recorded files checked in {statistics.median(r['check'] for r in runs) * 1000:.1f} ms; "
              f"goal ≤ {GOAL_S} s: {hit / GOAL_S:.2f} of it. `cmlens lower` wall {statistics.median(walls):.2f} s "
              f"(imports {statistics.median(r['imports'] for r in runs):.2f} s)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
