"""Real-world corpus (issue 26): small timm models, random weights, 1x3x96x96 channels-last, the same
calibration samples on both sides. Per model, side by side in one process:

  plain    ExecuTorch as a user writes it: export, CortexMQuantizer + prepare/calibrate/convert_pt2e,
           to_edge, CortexMPassManager.transform(), to_executorch() (a user needs the program);
  cmlens   lower() without the cache (stages, snapshots, reasons, pre-flight .pte), and when it fails,
           once more with --keep-going.

Prints: lowers / fails where, quarantined ops, fallbacks (same set as plain ExecuTorch?), time of each
side and the ratio. Model construction is outside both timings.
With --repeat N both sides run N times, alternating (plain, cmlens, plain, cmlens, ...), and each side's
fastest run is compared: on a shared machine the minimum is the least disturbed measurement of each.
Usage: python bench/realworld.py [--repeat N] [model ...]   (default: bench/realworld_models.py CORPUS)
"""
from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CMLENS_CACHE", tempfile.mkdtemp(prefix="cmlens-realworld-"))
MODELS_FILE = ROOT / "bench" / "realworld_models.py"
PLUMBING = re.compile(r"(view_copy|alias_copy|_clone_dim_order|clone|getitem|alloc|unsqueeze_copy|squeeze_copy)")


def source(name: str) -> str:
    return f"{MODELS_FILE}:{name}"


def portable_ops(ep: Any) -> Counter:
    """Compute ops left on portable kernels in a final edge program (what a fallback is)."""
    from backend_core.common.snapshot.capture import target_name

    out: Counter = Counter()
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        t = target_name(n.target)
        if t.startswith("aten.") and not PLUMBING.search(t):
            out[t] += 1
    return out


def plain(name: str, calib: int | None = None) -> dict[str, Any]:
    """Plain ExecuTorch, timed from the built model to the serialised program."""
    import copy

    import torch
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexMTargetConfig
    from executorch.exir import EdgeProgramManager, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    from backend_core.stages.models import load_model, parse_model_source
    from backend_core.stages.models.calibration import calibration_set
    from backend_core.stages.pipeline.stepped import to_layout

    m = load_model(parse_model_source(source(name)))
    inputs = m.example_inputs
    # the samples cmlens calibrates with, in the example's memory format (as the pipeline feeds them)
    samples = [to_layout(s, like=inputs) for s in calibration_set(inputs, calib, None)]
    t0 = time.perf_counter()
    try:
        ep = torch.export.export(m.module, inputs)
        prepared = prepare_pt2e(ep.module(check_guards=False), CortexMQuantizer())
        for s in samples:
            prepared(*s)
        edge = to_edge(torch.export.export(convert_pt2e(prepared), inputs),
                       compile_config=cortex_m_edge_compile_config())
        final = CortexMPassManager(edge.exported_program(),
                                   target_config=CortexMTargetConfig.from_target_string("cortex-m55")).transform()
        ops = portable_ops(final)
        EdgeProgramManager({"forward": copy.deepcopy(final)},
                           compile_config=cortex_m_edge_compile_config()).to_executorch()
    except Exception as e:  # noqa: BLE001 - a failure is the result
        msg = str(e)
        where = re.search(r"running the '(\w+)' pass", msg)
        return {"seconds": time.perf_counter() - t0, "ok": False,
                "where": where.group(1) if where else type(e).__name__, "ops": Counter()}
    return {"seconds": time.perf_counter() - t0, "ok": True, "where": "", "ops": ops}


def cmlens(name: str, keep_going: bool = False) -> dict[str, Any]:
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.lowering.lower import LowerOutputs
    from backend_core.stages.models import load_model, parse_model_source
    from backend_core.stages.pipeline.stages import PipelineOptions

    t0 = time.perf_counter()
    load_model(parse_model_source(source(name)))
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = lower_source(source(name), PipelineOptions(keep_going=keep_going), use_cache=False, outputs=LowerOutputs(pte=True))
    seconds = time.perf_counter() - t0 - load
    ops = Counter(n.target for n in r.fallbacks())
    fb = r.final.nodes if r.final else ()
    cats = Counter(n.fallback.category for n in fb if n.fallback is not None)
    err = r.error or {}
    return {"seconds": seconds, "ok": r.status == "done", "where": err.get("stage", ""), "ops": ops,
            "categories": cats, "quarantined": (r.verdicts or {}).get("quarantined") or {},
            "rewrites": list((r.verdicts or {}).get("rewrites") or {}),
            "failure": err.get("failure") or {}}


def main() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from realworld_models import CORPUS

    args = sys.argv[1:]
    repeat = 1
    if args[:1] == ["--repeat"]:
        repeat, args = max(1, int(args[1])), args[2:]
    names = args or list(CORPUS)
    rows = []
    print(f"{'model':22s} {'plain ExecuTorch':26s} {'cmlens':26s} {'quarantined':>11s} {'fallbacks':>9s} "
          f"{'same as plain':>13s} {'plain s':>8s} {'cmlens s':>8s} {'ratio':>6s}", flush=True)
    for name in names:
        p, c = plain(name), cmlens(name)
        for _ in range(repeat - 1):       # alternate, keep each side's fastest run
            p2, c2 = plain(name), cmlens(name)
            p["seconds"], c["seconds"] = min(p["seconds"], p2["seconds"]), min(c["seconds"], c2["seconds"])
        kg = cmlens(name, keep_going=True) if not c["ok"] else None
        same = "yes" if (p["ok"] and c["ok"] and p["ops"] == c["ops"]) or (not p["ok"] and not c["ok"]
                                                                           and p["where"] == c["where"]) else "NO"
        unknown = (kg or c)["categories"].get("unknown", 0)
        shown = kg or c
        ratio = c["seconds"] / p["seconds"] if p["seconds"] else float("nan")
        plain_txt = "lowers" if p["ok"] else f"fails in {p['where']}"
        cm_txt = "lowers" if c["ok"] else f"fails in {c['where']}"
        if kg is not None:
            cm_txt += "; keep-going " + ("lowers" if kg["ok"] else "fails")
        n_fb = sum(shown["ops"].values())
        rows.append(ratio)
        print(f"{name:22s} {plain_txt:26s} {cm_txt:26s} {len(shown['quarantined']):11d} {n_fb:9d} {same:>13s} "
              f"{p['seconds']:8.1f} {c['seconds']:8.1f} {ratio:6.2f}" + (f"  unknown reasons: {unknown}" if unknown else ""),
              flush=True)
        if kg is not None and kg["rewrites"]:
            print(f"{'':22s}   keep-going workarounds: {', '.join(kg['rewrites'])}", flush=True)
        if not c["ok"] and c["failure"].get("source"):
            f = c["failure"]
            print(f"{'':22s}   {f.get('op')} at {Path(f['source'].rsplit(':', 1)[0]).name}:"
                  f"{f['source'].rsplit(':', 1)[1]}: {f.get('code')}  [{f.get('module')}]", flush=True)
        if p["ok"] and c["ok"] and p["ops"] != c["ops"]:
            print(f"{'':22s}   plain {dict(p['ops'])} vs cmlens {dict(c['ops'])}", flush=True)
    if rows:
        print(f"\nratio cmlens / plain ExecuTorch: median {statistics.median(rows):.2f}, max {max(rows):.2f} "
              f"(goal: median <= 1.05, none over 1.2; fastest of {repeat} alternating run(s) per side)")


if __name__ == "__main__":
    main()
