"""Memory analysis of a model from the cache: read the .pte's plan, replay Method::load, build the
timeline and the board verdict. Target: mv2 <= 0.5 s (printed side by side with the goal, never asserted).

    .venv/bin/python bench/memory.py [models...]     (default: mv2 ds_cnn)

The first call lowers each model into the cache (minutes for mv2: not timed; set CMLENS_CACHE to keep it
between runs). Timed, three alternating repetitions, median: reading the cached lowering (the pickled
snapshots of every stage: what `cmlens lower` pays too) and, the figure the goal is for, the memory
analysis on top of it (deserialise the .pte with ExecuTorch's reader, replay Method::load, timeline, the
verdict for one board). Measured 2026-12-01 (2 shared cores, load ~6): mv2 analysis 0.41 s (0.33 s of it
ExecuTorch's deserialize_pte_binary of the 3.97 MB .pte), cache read 1.04 s; ds_cnn 0.08 s / 0.10 s."""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("CMLENS_CACHE", tempfile.mkdtemp(prefix="cmlens-bench-memory-"))
GOAL_S = 0.5


def _newest_entry(model: str) -> str | None:
    """The newest cached cortex-m55 lowering of `model` that holds its .pte (a cache key)."""
    from backend_core.stages.cache import ResultCache

    cache = ResultCache()
    if not cache.root.is_dir():
        return None
    for d in sorted(cache.root.iterdir(), key=lambda p: -p.stat().st_mtime):
        if not (d / "model.pte").is_file():
            continue
        hit = cache.load(d.name)
        if hit and hit[0].get("model") == model and hit[0]["snapshots"][-1].kind == "final":
            return d.name
    return None


def main(models: list[str]) -> int:
    from backend_core.stages.cache import ResultCache
    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.target.memory import analyze_memory, attach_board
    from backend_core.common.boards.specs import board_named
    from backend_core.stages.pipeline.stages import PipelineOptions

    keys = {}
    for m in models:                       # warm: lower once (not timed) into the cache, with the .pte
        key = _newest_entry(m)
        if key is None:
            t = time.perf_counter()
            res = lower(m, PipelineOptions(target="cortex-m55"), outputs=LowerOutputs(pte=True))
            print(f"{m}: lowered in {time.perf_counter() - t:.1f} s, .pte {len(res.blobs['model.pte']):,} B", flush=True)
            key = _newest_entry(m)
        # The entry is fixed here: other engineers editing backend_core change the code fingerprint (the
        # cache key) all the time, and a new key mid-bench would re-lower instead of reading the cache.
        keys[m] = key
        payload, blobs = ResultCache().load(key)
        analyze_memory(blobs["model.pte"], payload["snapshots"][-1])   # warm ExecuTorch's deserializer imports
    board = board_named("stm32h743")
    parts: dict[str, list[tuple[float, float]]] = {m: [] for m in models}
    n_ops: dict[str, int] = {}
    for _ in range(3):
        for m in models:
            t0 = time.perf_counter()
            payload, blobs = ResultCache().load(keys[m])
            t1 = time.perf_counter()
            rep = analyze_memory(blobs["model.pte"], payload["snapshots"][-1])
            attach_board(rep, board)
            t2 = time.perf_counter()
            parts[m].append((t1 - t0, t2 - t1))
            n_ops[m] = len(rep["timeline"])
    print(f"\n{'model':18} {'ops':>5} {'cache load s':>13} {'analysis s':>11} {'total s':>8} {'goal s':>7} {'ratio':>6}")
    for m in models:
        load = statistics.median(p[0] for p in parts[m])
        ana = statistics.median(p[1] for p in parts[m])
        tot = statistics.median(p[0] + p[1] for p in parts[m])
        print(f"{m:18} {n_ops[m]:5d} {load:13.3f} {ana:11.3f} {tot:8.3f} {GOAL_S:7.2f} {tot / GOAL_S:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["mv2", "ds_cnn"]))
