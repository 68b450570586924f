"""A fair speed figure (issue 38): `cmlens lower --no-cache` against a plain ExecuTorch script doing the same
work, on models of the second real-world wave (bench/realworld_models2.py), alternated in one run.

Both sides, each in a fresh Python process (imports and model construction are outside the timed part; each
process prints its own timing):
  plain    export, CortexMQuantizer + prepare_pt2e, calibration on the SAME samples cmlens uses (the example
           input plus N random ones, N = --calib), convert_pt2e, export, to_edge, CortexMPassManager.transform(),
           to_executorch() (a user needs the program);
  cmlens   lower() without the cache, as `cmlens lower --no-cache` runs it in-process: stages, snapshots,
           reasons, the pre-flight's .pte (its to_executorch).
Each model: plain, cmlens, plain, cmlens, ... (--repeat N each); the fastest of each side is compared (the
least disturbed run on a shared machine) and the ratio printed, then the median over the models, and per
model the two fastest runs' time per stage (export, quantize, edge, passes, and on the plain side to_executorch,
on cmlens' side the snapshots, reasons and pre-flight), so a ratio above 1 says which stage costs it.
With --keep-going, cmlens lowers with --keep-going (every round, calibration kept between rounds) and the plain
side stops where plain ExecuTorch fails (timm's mobileone_s0: AtenToCortexMPass), so the ratio is what keeping
going costs in plain lowerings (issue 38's goal: <= 3 on mobileone_s0).
Usage: PYTHONPATH=DIR python bench/realworld_speed.py [--repeat N] [--calib N] [--keep-going] [model ...]
       (default models: distilbert_sdpa ast_audio unet fastscnn)
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "bench" / "realworld_models2.py"
DEFAULT = ("distilbert_sdpa", "ast_audio", "unet", "fastscnn")

PLAIN = r'''
import copy, json, sys, time
sys.path.insert(0, ROOT)
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

m = load_model(parse_model_source(SOURCE))
inputs = m.example_inputs
samples = [to_layout(s, like=inputs) for s in calibration_set(inputs, CALIB, None)]   # the samples cmlens uses
torch.manual_seed(0)
t0 = time.perf_counter()
marks = [t0]
ep = torch.export.export(m.module, inputs)
marks.append(time.perf_counter())
prepared = prepare_pt2e(ep.module(check_guards=False), CortexMQuantizer())
for s in samples:
    prepared(*s)
converted = convert_pt2e(prepared)
marks.append(time.perf_counter())
edge = to_edge(torch.export.export(converted, inputs), compile_config=cortex_m_edge_compile_config())
marks.append(time.perf_counter())
try:
    final = CortexMPassManager(edge.exported_program(),
                               target_config=CortexMTargetConfig.from_target_string("cortex-m55")).transform()
except Exception as e:      # plain ExecuTorch fails on this model (--keep-going's comparison): its time to fail
    marks.append(time.perf_counter())
    stages = dict(zip(("export", "quantize", "edge", "passes"), [b - a for a, b in zip(marks, marks[1:])]))
    print("TIMING " + json.dumps({"seconds": time.perf_counter() - t0, "samples": len(samples), "stages": stages,
                                  "failed": type(e).__name__}))
    sys.exit(0)
marks.append(time.perf_counter())
EdgeProgramManager({"forward": copy.deepcopy(final)}, compile_config=cortex_m_edge_compile_config()).to_executorch()
marks.append(time.perf_counter())
stages = dict(zip(("export", "quantize", "edge", "passes", "to_executorch"), [b - a for a, b in zip(marks, marks[1:])]))
print("TIMING " + json.dumps({"seconds": time.perf_counter() - t0, "samples": len(samples), "stages": stages}))
'''

CMLENS = r'''
import json, sys, time
sys.path.insert(0, ROOT)
from backend_core.orchestration.execute.task import quiet_logs
quiet_logs()
from backend_core.orchestration.jobs.steps.lower import lower_source
from backend_core.stages.models import load_model, parse_model_source
from backend_core.stages.models.calibration import calibration_set
from backend_core.stages.pipeline.stages import PipelineOptions
# the same imports as the plain side, outside the timing
import torch
from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
from executorch.backends.cortex_m.target_config import CortexMTargetConfig
from executorch.exir import EdgeProgramManager, to_edge
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
m = load_model(parse_model_source(SOURCE))                                   # warm the model's own imports
n = len(calibration_set(m.example_inputs, CALIB, None))
loaded = []
t0 = time.perf_counter()
r = lower_source(SOURCE, PipelineOptions(calib=CALIB, keep_going=KEEP_GOING), use_cache=False,
                 on_model=lambda _m: loaded.append(time.perf_counter()))
total = time.perf_counter() - t0
build = (loaded[0] - t0) if loaded else 0.0          # building the model: outside the plain side's timing too
stages = {"export": 0.0, "quantize": 0.0, "edge": 0.0, "passes": 0.0}
edits = [*(r.verdicts.get("quarantined") or {}).values(), *(r.verdicts.get("rewrites") or {}).values()]
rounds = max([e.get("round", 0) + (0 if e.get("on") else 1) for e in edits], default=0) or 1   # program edits: same round
for snap in r.snapshots:         # each stage's own time (its snapshot taken after the clock stopped)
    key = {"export": "export", "quantize": "quantize", "edge": "edge"}.get(snap.kind, "passes")
    stages[key] += snap.seconds
# the rest: snapshots, reasons, the pre-flight (its to_executorch and rules), the result
stages["snapshots+reasons+pre-flight"] = total - build - sum(stages.values())
if KEEP_GOING:                   # the last round's stages only: the rest is the earlier rounds'
    stages = {"all rounds": total - build, "rounds": rounds or 1}
print("TIMING " + json.dumps({"seconds": total - build, "model_build": build, "samples": n, "status": r.status,
                              "stages": stages}))
'''


def _run(template: str, name: str, calib: int, keep_going: bool = False) -> dict:
    code = (template.replace("ROOT", repr(str(ROOT))).replace("SOURCE", repr(f"{MODELS}:{name}"))
            .replace("CALIB", str(calib)).replace("KEEP_GOING", repr(keep_going)))
    env = {**os.environ, "CMLENS_CACHE": tempfile.mkdtemp(prefix="cmlens-speed-")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=3600)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("TIMING ")), None)
    if line is None:
        return {"seconds": float("nan"), "error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(line[len("TIMING "):])


def main() -> None:
    args = sys.argv[1:]
    repeat, calib, keep_going = 2, 2, False
    while args and args[0] in ("--repeat", "--calib", "--keep-going"):
        if args[0] == "--keep-going":
            keep_going, args = True, args[1:]
            continue
        if args[0] == "--repeat":
            repeat = max(1, int(args[1]))
        else:
            calib = int(args[1])
        args = args[2:]
    names = args or list(DEFAULT)
    print(f"{'model':18s} {'samples':>7s} {'plain s':>8s} {'cmlens s':>8s} {'ratio':>6s}   runs (plain / cmlens)",
          flush=True)
    ratios = []
    for name in names:
        plain, cm = [], []
        for _ in range(repeat):          # alternate: plain, cmlens, plain, cmlens, ...
            plain.append(_run(PLAIN, name, calib))
            cm.append(_run(CMLENS, name, calib, keep_going))
        p = min(r["seconds"] for r in plain)
        c = min(r["seconds"] for r in cm)
        err = next((r.get("error") for r in plain + cm if r.get("error")), "")
        ratio = c / p if p == p and c == c and p else float("nan")
        if ratio == ratio:
            ratios.append(ratio)
        runs = " ".join(f"{a['seconds']:.1f}/{b['seconds']:.1f}" for a, b in zip(plain, cm))
        print(f"{name:18s} {plain[0].get('samples', '?'):>7} {p:8.1f} {c:8.1f} {ratio:6.2f}   {runs}"
              + (f"  error: {err}" if err else ""), flush=True)
        fp = min(plain, key=lambda r: r["seconds"]).get("stages") or {}
        fc = min(cm, key=lambda r: r["seconds"]).get("stages") or {}
        print("    per stage, plain: " + ", ".join(f"{k} {v:.1f}" for k, v in fp.items()), flush=True)
        print("    per stage, cmlens: " + ", ".join(f"{k} {v:.1f}" for k, v in fc.items()), flush=True)
    if ratios and keep_going:
        print(f"\nratio cmlens lower --keep-going --no-cache / one plain ExecuTorch lowering (to its failure, same "
              f"calibration samples): median {statistics.median(ratios):.2f}, max {max(ratios):.2f} over "
              f"{len(ratios)} models; fastest of {repeat} alternating run(s) per side (goal: <= 3)")
    elif ratios:
        print(f"\nratio cmlens lower --no-cache / plain ExecuTorch (same calibration samples, to_executorch on both): "
              f"median {statistics.median(ratios):.2f}, min {min(ratios):.2f}, max {max(ratios):.2f} over "
              f"{len(ratios)} models; fastest of {repeat} alternating run(s) per side (goal: median <= 1.05)")


if __name__ == "__main__":
    main()
