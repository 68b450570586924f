"""Second lowering of a model (from the result cache) ÷ first lowering, in one run.
Goal: the second ≤ 1 s. Usage: python bench/cache.py [model]   (default mv2)"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["CMLENS_CACHE"] = tempfile.mkdtemp(prefix="cmlens-bench-cache-")


def main() -> None:
    from backend_core.lowering.lower import lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    model = sys.argv[1] if len(sys.argv) > 1 else "mv2"
    t0 = time.perf_counter()
    first = lower(model, PipelineOptions())
    t1 = time.perf_counter()
    second = lower(model, PipelineOptions())
    t2 = time.perf_counter()
    assert not first.from_cache and second.from_cache
    print(f"{model}: first {t1 - t0:.2f} s, second (cache) {t2 - t1:.2f} s, ratio {(t2 - t1) / (t1 - t0):.3f} "
          f"(goal: second ≤ 1 s)")
    from results import publish

    publish("cache", what=f"second lowering of {model} (from the result cache), in-process", goal="≤ 1 s",
            result=f"{t2 - t1:.2f} s (first lowering {t1 - t0:.1f} s)",
            figures={"first_s": t1 - t0, "second_s": t2 - t1})


if __name__ == "__main__":
    main()
