"""Measure the runtime around the model on a reference build and write resources/boards/runtime.json:
the table `cmlens memory` uses when this machine has no ExecuTorch libraries for the CPU.

Per CPU (libraries must be built: `cmlens run MODEL --target CPU --et-root ...` once):
  1. run each reference model with `cmlens run` (real QEMU): the built ELF's sections and the board
     layer's stack / heap high-water marks (CMLENS MEMORY line);
  2. from the first run's runner build: the stock runner's own objects (the symbols they reference are
     the link probe's roots; their kept sizes come from the map file);
  3. the link probe with no portable op (the core) and with each portable / quantized op of the
     checkout alone (the op's increment);
  4. check: the probe for each model's op set against that model's ELF (printed, must be within 5 %).

  .venv/bin/python bench/runtime_sizes.py --cpus cortex-m55 --et-root PATH/TO/executorch \
      --cmsis-nn PATH/TO/CMSIS-NN [--models ds_cnn,mobilenet_v1_025] [--ops all|model]
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_core.target.build import link_probe as lp  # noqa: E402
from backend_core.target.memory.elf import elf_sizes  # noqa: E402
from backend_core.target.memory.runtime import RUNTIME_JSON, load_table, portable_ops  # noqa: E402

RUNNER_OBJECTS = re.compile(r"arm_executor_runner\.dir")
# Portable / quantized ops a Cortex-M lowering leaves behind most often (fallbacks and plumbing).
COMMON_OPS = [f"aten::{o}" for o in (
    "view_copy.out", "_clone_dim_order.out", "native_layer_norm.out", "clamp.out", "add.out", "sub.out", "mul.out",
    "div.out", "_softmax.out", "exp.out", "mean.out", "sum.IntList_out", "max_pool2d_with_indices.out",
    "avg_pool2d.out", "relu.out", "sigmoid.out", "tanh.out", "hardtanh.out", "gelu.out", "convolution.out",
    "addmm.out", "mm.out", "bmm.out", "permute_copy.out", "cat.out", "slice_copy.Tensor_out", "squeeze_copy.dims_out",
    "unsqueeze_copy.out", "expand_copy.out", "rsqrt.out", "sqrt.out", "pow.Tensor_Scalar_out",
    "upsample_nearest2d.vec_out", "constant_pad_nd.out", "transpose_copy.int_out", "full.out", "where.self_out",
    "split_with_sizes_copy.out", "amax.out", "argmax.out")] + ["dim_order_ops::_clone_dim_order.out",
    "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out"]
# CPUs whose compiler output for the portable kernels is alike (Thumb-2 + DSP, soft/hard FP alike): a
# CPU with only slim libraries borrows the per-op increments of one measured on full libraries.
SAME_CODEGEN = {"cortex-m4": ("cortex-m7", "cortex-m33"), "cortex-m33": ("cortex-m7", "cortex-m4"),
                "cortex-m7": ("cortex-m4", "cortex-m33"), "cortex-m55": ()}


def run_model(model: str, cpu: str, args: argparse.Namespace, out: Path) -> dict:
    js = out / f"{model}-{cpu}.json"
    if args.reuse and js.is_file():
        print(f"  {model} on {cpu}: the run of {time.ctime(js.stat().st_mtime)} ({js})", flush=True)
        return json.loads(js.read_text())
    argv = [str(ROOT / ".venv" / "bin" / "cmlens"), "run", model, "--target", cpu, "--et-root", args.et_root,
            "--quiet", "--json-file", str(js)] + (["--cmsis-nn", args.cmsis_nn] if args.cmsis_nn else [])
    start = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True)
    print(f"  {model} on {cpu}: exit {res.returncode} in {time.monotonic() - start:.0f} s", flush=True)
    data = json.loads(js.read_text())
    if "error" in data and "outcome" not in data:
        raise SystemExit(f"{model} on {cpu}: {data['error']}")
    return data


def runner_objects(build_dir: Path) -> tuple[list[str], dict[str, int]]:
    """(symbols the runner's own objects need from the libraries, their kept code/data/bss)."""
    objs = sorted((build_dir / "CMakeFiles" / "arm_executor_runner.dir").rglob("*.obj"))
    undefined, defined = set(), set()
    for o in objs:
        for line in subprocess.run(["arm-none-eabi-nm", str(o)], capture_output=True, text=True).stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                undefined.add(parts[1])
            elif len(parts) == 3 and parts[1] in "TtWDdBbRrV":
                defined.add(parts[2])
    sizes = lp.map_sizes(build_dir / "arm_executor_runner.map", RUNNER_OBJECTS)
    return sorted(undefined - defined), sizes


def all_ops(et_root: Path) -> list[str]:
    ops = set()
    for yaml, _, namespaces in lp._YAMLS:
        ops |= {op for op in lp._yaml_kernels(et_root / yaml, namespaces) if op.startswith(namespaces[0] + "::")
                or op.startswith("dim_order_ops::")}
    return sorted(ops)


def full_install(cpu: str) -> Path | None:
    """The newest install for `cpu` that still has the portable / quantized kernel archives (slim
    libraries, the default since c5fa624, have none: the runner compiles its model's kernels itself),
    so per-op increments can be linked. None: only slim installs here."""
    found = [(p.stat().st_mtime, p.parents[1]) for p in (lp.cache_dir() / "executorch").glob(
             f"*-{cpu}-release*/install/lib/libportable_kernels.a") if (p.parents[2] / lp.STAMP).is_file()]
    return max(found)[1] if found else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpus", default="cortex-m55")
    ap.add_argument("--models", default="ds_cnn,mobilenet_v1_025,resnet8,layernorm_mlp")
    ap.add_argument("--et-root", required=True)
    ap.add_argument("--cmsis-nn")
    ap.add_argument("--ops", choices=("all", "common", "model"), default="common",
                    help="measure every portable/quantized op of the checkout, the common fallbacks and the models' "
                         "ops, or only the models' ops")
    ap.add_argument("--out", type=Path, default=RUNTIME_JSON)
    ap.add_argument("--work", type=Path, default=Path("/tmp/cmlens-runtime-sizes"))
    ap.add_argument("--reuse", action="store_true", help="use a model's run JSON already in --work")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    table = load_table(args.out)
    table.setdefault("cpus", {})
    et_root = Path(args.et_root)
    commit = subprocess.run(["git", "-C", str(et_root), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    gcc = subprocess.run(["arm-none-eabi-gcc", "-dumpversion"], capture_output=True, text=True).stdout.strip()
    for cpu in args.cpus.split(","):
        install = lp.installed_libraries(cpu)
        if install is None:
            print(f"{cpu}: no libraries built here: skipped")
            continue
        print(f"{cpu}: libraries {install}")
        runs = {m: run_model(m, cpu, args, args.work) for m in args.models.split(",")}
        first = next(iter(runs.values()))
        roots, own = runner_objects(Path(first["elf"]).parent)
        table["runner"] = {"undefined": roots, "about": "symbols the stock arm_executor_runner's own objects "
                           "(BundleIO, event tracer, baked model) need from the libraries: the link probe's roots"}
        row = table["cpus"].setdefault(cpu, {})
        row.update({"runner_objects": own, "stack_marks": {}, "heap_marks": {}, "elf": {}, "ops": {}})
        for m, data in runs.items():
            mark = ((data.get("memory") or {}).get("runner") or {}).get("board")
            if mark:
                row["stack_marks"][m] = mark["stack_used"]
                row["heap_marks"][m] = mark["heap_used"]
            row["elf"][m] = {k: v for k, v in elf_sizes(data["elf"]).items() if k in ("code", "data", "bss", "stack", "heap")}
            row["elf"][m]["outcome"] = data.get("outcome")
            # the model's ETDump bound (what the heap is sized from: memory/runtime.py heap_for)
            row["elf"][m]["etdump_bytes"] = ((data.get("memory") or {}).get("predicted") or {}).get("etdump_bytes")
            row["elf"][m]["ops"] = portable_ops(data.get("ops", {}).get("model", []))
        start = time.monotonic()
        core = lp.probe(cpu, [], install, table, et_root=et_root, work=args.work / "probe")
        row["core"] = {"code": core.code, "data": core.data, "bss": core.bss}
        row["parts"] = core.parts
        model_ops = {o for r in row["elf"].values() for o in r["ops"]}
        ops = sorted(set(all_ops(et_root)) | model_ops if args.ops == "all" else
                     set(COMMON_OPS) | model_ops if args.ops == "common" else model_ops)
        full = full_install(cpu)
        row.pop("ops_measured_on", None)
        if full is None:    # slim libraries only: the increments of a CPU of the same code generation
            donor = next((c for c in SAME_CODEGEN.get(cpu, ()) if (table["cpus"].get(c) or {}).get("ops")
                          and not table["cpus"][c].get("ops_measured_on")), None)
            print(f"  {cpu}: no portable kernel archive here (slim libraries): per-op increments "
                  + (f"copied from {donor}" if donor else "not measured"))
            if donor:
                row["ops"] = dict(table["cpus"][donor]["ops"])
                row["ops_measured_on"] = donor
            ops = []
        else:
            full_core = core if full == install else lp.probe(cpu, [], full, table, et_root=et_root,
                                                               work=args.work / "probe")
            print(f"  per-op increments from {full}")
        for i, op in enumerate(ops):
            got = lp.probe(cpu, [op], full, table, et_root=et_root, work=args.work / "probe")
            if op in got.ops:
                row["ops"][op] = {"code": got.code - full_core.code, "data": got.data - full_core.data,
                                  "bss": got.bss - full_core.bss}
            if i % 25 == 0:
                print(f"  ops {i}/{len(ops)} ({time.monotonic() - start:.0f} s)", flush=True)
        print(f"  core + {len(ops)} ops probed in {time.monotonic() - start:.0f} s ({len(row['ops'])} in the row)")
        for m, e in row["elf"].items():
            p = lp.probe(cpu, e["ops"], install, table, et_root=et_root, work=args.work / "probe")
            for what, pred, real in (("code+data", p.code + p.data, e["code"] + e["data"]),
                                     ("data+bss", p.data + p.bss, e["data"] + e["bss"])):
                print(f"  check {m:18} {what:10} probe {pred:>9,}  ELF {real:>9,}  {100 * (pred - real) / real:+.2f} %")
    table["reference"] = {"executorch": commit, "toolchain": f"arm-none-eabi-gcc {gcc}, newlib (Debian)",
                          "measured": time.strftime("%Y-%m-%d"), "script": "bench/runtime_sizes.py"}
    table["about"] = ("The runtime around the model (code, .data, .bss) per CPU and per portable op, measured on "
                      "a reference build with bench/runtime_sizes.py; stack and heap marks from real QEMU runs "
                      "(kernels/common/memmark.c). backend_core/target/memory/runtime.py reads it.")
    args.out.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
