"""The bundle's report: `bundle.json` (what a script or CI reads) and `README.md` (what a person reads),
made from one dict. Flash and RAM by part, the pools with where each figure came from, the board fit,
the I/O formats, every op with the kernel it runs on, the versions, the command, and -- when the
lowering is not plain ExecuTorch's or leaves ops on portable kernels -- what and why."""
from __future__ import annotations

from typing import Any

from backend_core.target.memory.fit import kib
from backend_core.target.export.recipe import recipe_lines

BUNDLE_FORMAT = 1
KERNELS = {"cortex_m": "CMSIS-NN (cortex_m_kernels, backends/cortex_m/ops)",
           "aten": "portable kernel (kernels/portable/cpu), compiled from the checkout",
           "dim_order_ops": "portable kernel (kernels/portable/cpu), compiled from the checkout",
           "quantized_decomposed": "quantized kernel (kernels/quantized/cpu), compiled from the checkout"}


def kernel_of(op: str) -> str:
    return KERNELS.get(op.split("::", 1)[0], "built into the runtime (executorch library)")


def readme(info: dict[str, Any]) -> str:
    """README.md of the bundle."""
    L = [f"# {info['model']} for {info['target']}" + (f" on {info['board']['name']}" if info.get("board") else ""),
         "", f"Made by `{info['command']}`.", "",
         "## Files", "",
         "| file | what |", "|---|---|",
         "| `model.pte` | the lowered ExecuTorch program |",
         "| `model_pte.h` | the program as `cmlens_model_pte[]`, `const`, aligned(16), in section "
         f"`{info['model_section']}` (put it in flash with your linker script) |",
         "| `cmlens_model.h`, `cmlens_model.cpp` | the C API over ExecuTorch's runtime; static pools, no malloc |",
         "| `model_ops.txt` | the selective build's op list (EXECUTORCH_SELECT_OPS_LIST form) |",
         "| `cmlens_model.cmake`, `CMakeLists.txt` | the `cmlens_model` library for your CMake project |",
         "| `toolchain.cmake` | arm-none-eabi-gcc with the CPU flags the libraries are built with |"]
    if info.get("reference"):
        L.append("| `cmlens_reference.h`, `reference_*.bin` | a reference input and the output bytes a correct port "
                 "computes from it |")
    L += ["| `bundle.json` | this report as data |", ""]
    L += recipe_lines(info)
    L += ["## Use it", "", "```c",
          "#include \"cmlens_model.h\"",
          "if (cmlens_model_init() != 0) { /* see the error code */ }",
          "cmlens_model_run(input, output);   /* buffers of CMLENS_MODEL_INPUT_0_BYTES / CMLENS_MODEL_OUTPUT_0_BYTES */",
          "```", "", "## Memory", "", "| part | where | bytes | from |", "|---|---|---:|---|"]
    for row in info["memory"]["parts"]:
        L.append(f"| {row['part']} | {row['kind']} | {row['bytes']:,} | {row['source']} |")
    fit = info.get("board_fit")
    L += [""]
    if fit:
        L.append(f"Board fit on {info['board']['name']}: **{'fits' if fit['fits'] else 'DOES NOT FIT'}** (RAM free "
                 f"{kib(fit['ram_free_bytes'])}" + (f", flash free {kib(fit['flash_free_bytes'])}"
                                                    if fit.get("flash_free_bytes") is not None else "") + ").")
        L += [f"- {p}" for p in fit.get("problems", [])] + [f"- note: {n}" for n in fit.get("notes", [])]
    else:
        L.append("No board given: no fit verdict (export with --board NAME).")
    L += schedule_lines(info.get("schedule"))
    L += ["", "## Inputs and outputs", "", "| tensor | dtype | shape | dim order | bytes | int8 scale | zero point |",
          "|---|---|---|---|---:|---:|---:|"]
    for kind in ("inputs", "outputs"):
        for io in info["io"][kind]:
            q = io.get("quantization") or {}
            L.append(f"| {kind[:-1]} {io['index']} | {io['dtype']} | {io['shape']} | {io['dim_order']} | {io['nbytes']} | "
                     f"{q.get('scale', '-')} | {q.get('zero_point', '-')} |")
    L += ["", "A non-contiguous dim order (channels-last) means the buffer holds the values in that order.",
          "", "## Operators", "", f"Selective build: {info['selective_build']['how']}", "", "| op | kernel |", "|---|---|"]
    for op in info["ops"]:
        L.append(f"| `{op['op']}` | {op['kernel']} |")
    if info.get("fallbacks"):
        L += ["", "## Portable fallbacks", "", info["fallback_warning"], ""]
        L += [f"- `{f['node']}` ({f['op']})" for f in info["fallbacks"]]
    if info.get("workarounds"):
        L += ["", "## Not plain ExecuTorch", "", info["workarounds"]]
    if info.get("findings"):
        L += ["", "## Pre-flight findings", ""] + [f"- {f['certainty']}: {f['node'] or '(program)'} [{f['rule']}] "
                                                   f"{f['message']}" for f in info["findings"]]
    L += speed_lines(info.get("speed"))
    L += ["", "## Versions", ""] + [f"- {k}: {v}" for k, v in info["versions"].items()]
    if info.get("check"):
        c = info["check"]
        L += ["", "## Proof (--check)", "", f"{c['verdict']}: {c['summary']}"]
        if c.get("inputs"):
            L += ["", f"Inputs run on the target: {', '.join(c['inputs'])}."]
        L += [""] + [f"- warning: {w}" for w in c.get("warnings") or []] if c.get("warnings") else []
    return "\n".join(L) + "\n"


def schedule_lines(s: dict[str, Any] | None) -> list[str]:
    """README.md's "Schedule" section: the program is a patch schedule of the lowering (cmlens --schedule)."""
    if not s:
        return []
    where = f"`{s['split']}` in {s['grid'][0]}×{s['grid'][1]} patches" if s["split"] else "no patches"
    L = ["", "## Schedule", "",
         f"`model.pte` is a patch schedule of the lowered program ({where}, planner {s['planner']}; `{s['file']}`): "
         f"total RAM {kib(s['total_ram_bytes'])} against {kib(s['unscheduled_total_ram_bytes'])} unscheduled, "
         f"+{100 * s['extra_macs']:.1f} % MACs (halo recompute), copies {kib(s['copy_bytes'])} per inference, "
         f"flash {s['flash_delta']:+,} B. The pools above are sized from the scheduled program's own plan.",
         "", f"Expected outputs: {s['expected_outputs']}."]
    q = s.get("input_quant")
    if q:
        L += ["", f"**The input is int8** (`--input-dtype int8`): the program no longer quantizes it. Quantize it "
              f"yourself, or call `cmlens_model_quantize_input(0, x, q, n)`, which does the step the program did: "
              f"q = clamp(round(x / {q['scale']:.9g}) + {q['zero_point']}, {q['qmin']}, {q['qmax']})."]
    return L


def speed_lines(speed: dict[str, Any] | None) -> list[str]:
    """README.md's "Speed (estimate)" section."""
    if not speed:
        return []
    L = ["", "## Speed (estimate)", ""]
    e = speed.get("estimate")
    if not e:
        return L + [speed.get("how") or "No time estimate.", *[f"- note: {n}" for n in speed.get("notes", [])]]
    L += [f"**{e.get('headline', '')}**", "", f"- used: {e.get('used', '')}",
          f"- an estimate, not a measurement: {'; '.join(e.get('sources_of_error') or [])}",
          f"- from: {speed.get('instructions', 0):,} kernel instructions ({speed.get('instructions_unit', '')}), "
          f"{speed.get('profile_from', '')}"]
    L += [f"- note: {n}" for n in e.get("notes", [])]
    L += ["", "| node | op | instructions | ≈ ms |", "|---|---|---:|---:|"]
    for r in speed.get("top_ops", []):
        L.append(f"| `{r['node'] or '?'}` | {r['op']} | {r['instructions']:,} | "
                 + ("-" if r["ms"] is None else f"{r['ms']:.3f}") + " |")
    return L


def complete_runtime(runtime: dict[str, Any] | None) -> dict[str, Any] | None:
    """The runtime estimate with the portable kernels the link probe could not count (slim libraries have
    none: the bundle compiles them from the checkout) added from the shipped per-op table
    (resources/boards/runtime.json, measured on a reference build), so the bundle's flash figure covers
    them. Measured: layernorm_mlp on M55 linked 44 KB over the uncompleted figure."""
    if not runtime:
        return runtime
    from backend_core.target.memory.runtime import load_table

    missing = [n.split(": ", 1)[0] for n in runtime.get("notes", []) if "not counted" in n]
    if not missing:
        return runtime
    row = load_table().get("cpus", {}).get(runtime.get("cpu", ""), {})
    per_op = row.get("ops", {})
    worst = max(per_op.values(), key=lambda m: m["code"], default={"code": 0})
    out = {**runtime, "notes": list(runtime.get("notes", []))}
    for op in missing:
        m = per_op.get(op, worst)
        out["code"] += m["code"]
        out["data"] += m.get("data", 0)
        out["bss"] += m.get("bss", 0)
        out["notes"].append(f"{op}: counted from the shipped table ({m['code']:,} B of code"
                            + ("" if op in per_op else ", the largest measured portable op") + ")")
    out["flash"] = out["code"] + out["data"]
    out["static_ram"] = out["data"] + out["bss"] + out.get("stack", 0) + out.get("heap", 0)
    return out


def memory_parts(pools: dict[str, Any], pte_bytes: int, constant_bytes: int,
                 runtime: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Flash and RAM by part, each with where its figure came from."""
    rows = [{"part": "model.pte (constants + program)", "kind": "flash", "bytes": pte_bytes,
             "source": f"the program file: constants {constant_bytes:,} B + program {pte_bytes - constant_bytes:,} B"}]
    for p in pools["planned"]:
        rows.append({"part": p["name"], "kind": "ram", "bytes": p["bytes"], "source": p["source"]})
    for key in ("method_allocator", "temp_allocator"):
        p = pools[key]
        rows.append({"part": p["name"], "kind": "ram", "bytes": p["bytes"], "source": p["source"]})
    rows.append({"part": "the API's runtime objects (Program, Method, allocators, loader)", "kind": "ram",
                 "bytes": pools["api_objects_bytes"], "source": "static storage in cmlens_model.cpp: .bss of "
                 "cmlens_model.cpp.obj, measured with arm-none-eabi-g++ 12.2 (32-bit Arm)"})
    if runtime:
        src = runtime.get("source", "")
        missing = [n.split(": ", 1)[0] for n in runtime.get("notes", []) if "counted from the shipped table" in n]
        rows.append({"part": "ExecuTorch runtime + kernels + C library (code, rodata)", "kind": "flash",
                     "bytes": runtime["code"] + runtime["data"], "source": f"estimate for the stock runner with this "
                     f"op set (cmlens memory, from {src}); your firmware's own code comes on top"
                     + (f"; the portable kernels of {', '.join(missing)} from the shipped per-op table (the "
                        "libraries have none: the bundle compiles them from the checkout; --check measures them)"
                        if missing else "")})
        rows.append({"part": "runtime .data + .bss", "kind": "ram", "bytes": runtime["data"] + runtime["bss"],
                     "source": f"same estimate (from {src})"})
    return rows
