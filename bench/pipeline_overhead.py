"""Stepped pipeline with snapshots ÷ plain to_edge + CortexMPassManager.transform(), side by side.

Both sides do the same work from the same inputs: float export (the model as given), PT2E quantize with
the same calibration samples, export, to_edge, the Cortex-M passes. The stepped side also snapshots
every stage, diffs and explains fallbacks. Goal: ≤ 1.10. Usage: python bench/pipeline_overhead.py [models...]
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("CMLENS_CACHE", tempfile.mkdtemp(prefix="cmlens-bench-"))


def plain(model_name: str) -> float:
    import torch
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.exir import to_edge

    from backend_core.stages.models import load_model, parse_model_source
    from backend_core.stages.models.calibration import calibration_set
    from backend_core.stages.pipeline.quantize import quantize
    from backend_core.stages.pipeline.stepped import to_layout
    from backend_core.common.cpus import target_config

    m = load_model(parse_model_source(model_name))
    t0 = time.perf_counter()
    inputs = to_layout(m.example_inputs)
    calib = [to_layout(s, like=inputs) for s in calibration_set(m.example_inputs, None, None)]
    ep = torch.export.export(m.module, inputs)
    converted, _ = quantize(ep.module(check_guards=False), inputs, calib, "legacy")
    edge = to_edge(torch.export.export(converted, inputs), compile_config=cortex_m_edge_compile_config())
    CortexMPassManager(edge.exported_program(), target_config=target_config("cortex-m55")).transform()
    return time.perf_counter() - t0


def stepped(model_name: str) -> float:
    from backend_core.lowering.lower import lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    t0 = time.perf_counter()
    r = lower(model_name, PipelineOptions(), use_cache=False)
    assert r.status == "done", r.error
    return time.perf_counter() - t0 - _load_seconds(model_name)


_LOAD: dict[str, float] = {}


def _load_seconds(model_name: str) -> float:
    """Model construction time, excluded from the stepped side (plain() builds it before t0)."""
    if model_name not in _LOAD:
        from backend_core.stages.models import load_model, parse_model_source

        t0 = time.perf_counter()
        load_model(parse_model_source(model_name))
        _LOAD[model_name] = time.perf_counter() - t0
    return _LOAD[model_name]


def main() -> None:
    models = sys.argv[1:] or ["ds_cnn", "mv2"]
    plain("layernorm_mlp")   # warm imports and kernels for both sides
    stepped("layernorm_mlp")
    print(f"{'model':10s} {'plain s':>8s} {'stepped s':>9s} {'ratio':>6s}   (goal ≤ 1.10)")
    ratios: dict[str, float] = {}
    for name in models:
        reps = 3
        p, s = [], []
        for _ in range(reps):          # alternate so machine noise hits both sides
            p.append(plain(name))
            s.append(stepped(name))
        mp, ms = statistics.median(p), statistics.median(s)
        print(f"{name:10s} {mp:8.2f} {ms:9.2f} {ms / mp:6.2f}", flush=True)
        ratios[name] = ms / mp
    from results import publish

    publish("pipeline_overhead", what="stepped pipeline with snapshots ÷ plain `to_edge` + `transform()`, "
            "medians of 3 alternated", result=", ".join(f"{m} {r:.2f}" for m, r in ratios.items()), goal="≤ 1.10",
            figures={f"{m}_ratio": r for m, r in ratios.items()})


if __name__ == "__main__":
    main()
