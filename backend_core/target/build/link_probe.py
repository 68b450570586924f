"""The runtime's size for one CPU and op set from this machine's built ExecuTorch libraries, before the
firmware for a model is built: a link probe.

The probe links what the runner build links (kernels/runner/CMakeLists.txt: the board layer, the
installed ExecuTorch archives with cortex_m_ops_lib whole, the portable kernels of the model's ops, full
newlib and libstdc++), with the same flags (--gc-sections, the board layer's --wrap options), rooted
at the symbols the stock runner's own objects reference (measured on the reference build and shipped
in resources/boards/runtime.json, as are those objects' own sizes). `arm-none-eabi-size -A` of the
result gives code, .data and .bss; its map file says which archive members the link pulled in, so the
code is also given by part. About a second per probe; results are cached per (libraries, op set).

`runtime_for` picks: a built ELF (--elf) > the libraries > the shipped table."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError, CmlensError
from backend_core.target.memory.elf import elf_sizes, parse_size_a, totals
from backend_core.target.memory.runtime import RuntimeSize, from_elf, from_table, heap_for, load_table, portable_ops, reservations
from backend_core.common.boards.table import board_for
from backend_core.target.build.paths import KERNELS_DIR, cache_dir
from backend_core.target.build.kernels import BuildRequest, KernelBuilder

STAMP = "cmlens-libs.json"
CONFIG_FILE = "lib/cmake/ExecuTorch/executorch-config.cmake"
# The archives of the runner's link, in its order (kernels/runner/CMakeLists.txt and the ExecuTorch
# targets' interface libraries, read from a real runner build's link line).
WHOLE_ARCHIVES = ("libexecutorch.a", "libcortex_m_ops_lib.a")
ARCHIVES = ("libextension_runner_util.a", "libbundled_program.a", "libetdump.a", "libflatccrt.a",
            "libcortex_m_kernels.a", "libcmsis-nn.a", "libportable_kernels.a", "libquantized_kernels.a",
            "libkernels_util_all_deps.a",
            "libexecutorch.a", "libexecutorch_core.a", "libextension_threadpool.a")
WRAPS = ("et_pal_current_ticks", "et_pal_ticks_to_ns_multiplier", "printf", "fprintf", "sprintf", "snprintf",
         "vprintf", "vfprintf", "vsprintf", "vsnprintf")
PARTS = (("board layer", re.compile(r"cmlens_board\.dir")),
         ("cortex_m + CMSIS-NN kernels", re.compile(r"lib(cortex_m_ops_lib|cortex_m_kernels|cmsis-nn)\.a")),
         ("portable ops", re.compile(r"lib(portable_kernels|kernels_util_all_deps|cmlens_portable_ops_lib|quantized_kernels|quantized_ops_lib)\.a")),
         ("ExecuTorch runtime", re.compile(r"lib(executorch|executorch_core|extension_\w+|bundled_program|etdump|flatccrt)\.a")),
         ("C/C++ libraries", re.compile(r"lib(c|m|g|gcc|stdc\+\+|supc\+\+|nosys)\.a")))


def installed_libraries(cpu: str, cache_root: Path | None = None) -> Path | None:
    """The newest finished library install for `cpu` in the cache (None: not built here)."""
    base = (Path(cache_root) if cache_root is not None else cache_dir()) / "executorch"
    found = [(p.stat().st_mtime, p.parent) for p in base.glob(f"*-{cpu}-release*/{STAMP}")
             if (p.parent / "install" / CONFIG_FILE).is_file()]
    return max(found)[1] / "install" if found else None


_YAMLS = (("kernels/portable/functions.yaml", "libportable_kernels.a", ("aten", "dim_order_ops")),
          ("kernels/quantized/quantized.yaml", "libquantized_kernels.a", ("quantized_decomposed",)))


def _yaml_kernels(path: Path, namespaces: tuple[str, ...]) -> dict[str, str]:
    """{"ns::op.overload": kernel function name} from an ExecuTorch functions.yaml / quantized.yaml."""
    out: dict[str, str] = {}
    op = None
    for line in path.read_text().splitlines():
        if m := re.match(r"- (?:op|func): (?:(\w+)::)?([\w.]+)", line):
            op = m.group(2) if m.group(1) is None else f"{m.group(1)}::{m.group(2)}"
        elif (m := re.search(r"kernel_name: (\S+)", line)) and op:
            fn = m.group(1).rsplit("::", 1)[-1]
            for ns in namespaces:
                out[op if "::" in op else f"{ns}::{op}"] = fn
    return out


def _defined(lib: Path, nm: str) -> dict[str, str]:
    """{demangled function name (no arguments): mangled symbol} of the global functions in an archive."""
    raw = subprocess.run([nm, "--defined-only", "-g", str(lib)], capture_output=True, text=True).stdout
    dem = subprocess.run([nm, "--defined-only", "-g", "-C", str(lib)], capture_output=True, text=True).stdout
    names: dict[str, str] = {}
    for a, b in zip(raw.splitlines(), dem.splitlines()):
        pa, pb = a.split(maxsplit=2), b.split(maxsplit=2)
        if len(pa) == 3 and pa[1] in "TW" and len(pb) == 3:
            names.setdefault(pb[2].split("(", 1)[0], pa[2])
    return names


def kernel_roots(ops: list[str], install: Path, et_root: Path | None) -> tuple[list[str], list[str]]:
    """(mangled symbols of the kernels of `ops`, ops without a kernel found): the checkout's
    kernels/portable/functions.yaml and kernels/quantized/quantized.yaml give the kernel function, `nm`
    of the installed archive its symbol (what the runner's generated registration calls)."""
    nm = shutil.which("arm-none-eabi-nm")
    roots, missing = [], []
    tables = []
    for yaml, lib, namespaces in _YAMLS:
        if et_root is not None and (et_root / yaml).is_file() and (install / "lib" / lib).is_file() and nm:
            tables.append((_yaml_kernels(et_root / yaml, namespaces), _defined(install / "lib" / lib, nm)))
    for op in ops:
        sym = next((syms.get(f"torch::executor::native::{fns[op]}") for fns, syms in tables if op in fns), None)
        (roots.append(sym) if sym else missing.append(op))
    return roots, missing


def _board_layer(cpu: str, root: Path) -> tuple[list[Path], Path]:
    """The board layer's objects and linker script for the QEMU board of `cpu`: the self-test build
    compiles them (once; ninja makes a repeat a no-op)."""
    req = BuildRequest(board_for(cpu, "qemu"), ("cmlens_selftest",), build_root=root)
    KernelBuilder(req).run()
    objs = sorted((req.build_dir / "CMakeFiles" / "cmlens_board.dir").rglob("*.obj"))
    return objs, req.build_dir / "cmlens_board.ld"


def probe(cpu: str, ops: list[str], install: Path, table: dict, *, et_root: Path | None = None,
          work: Path | None = None, etdump_bytes: int | None = None) -> RuntimeSize:
    """Link the runtime for `cpu` with these portable ops against `install`; BadInputError when a tool
    or the table's runner roots are missing."""
    gxx = shutil.which("arm-none-eabi-g++")
    if gxx is None:
        raise BadInputError("arm-none-eabi-g++ is missing: cannot link the probe.", "sudo apt-get install gcc-arm-none-eabi")
    ref = table.get("runner") or {}
    roots = ref.get("undefined") or []
    if not roots:
        raise BadInputError("The shipped table has no runner roots for the link probe.", "Use the table (--runtime-from table).")
    work = work or cache_dir() / "link-probe"
    objs, script = _board_layer(cpu, work / "board")
    kroots, missing = kernel_roots(ops, install, et_root)
    lib = install / "lib"
    board = board_for(cpu, "qemu")
    out = work / f"probe-{cpu}-{hashlib.sha1(repr((sorted(ops), str(install))).encode()).hexdigest()[:10]}"
    out.mkdir(parents=True, exist_ok=True)
    argv = [gxx, *board.gcc_flags, "-nostartfiles", f"-T{script}", f"-L{KERNELS_DIR / 'linker'}",
            "-Wl,--gc-sections", *[f"-Wl,--wrap={w}" for w in WRAPS], "-Wl,--entry=Reset_Handler",
            *[f"-Wl,-u,{s}" for s in [*roots, *kroots]], *map(str, objs),
            "-Wl,--whole-archive", *[str(lib / a) for a in WHOLE_ARCHIVES if (lib / a).is_file()],
            "-Wl,--no-whole-archive", "-Wl,--start-group",
            *[str(lib / a) for a in ARCHIVES if (lib / a).is_file()], "-Wl,--end-group",
            "-Wl,--unresolved-symbols=ignore-all",      # the runner's own objects are not linked
            f"-Wl,-Map={out / 'probe.map'}", "-o", str(out / "probe.elf")]
    res = subprocess.run(argv, capture_output=True, text=True)
    if res.returncode != 0:
        raise BadInputError("The link probe failed: " + (res.stderr.strip().splitlines() or ["?"])[-1],
                            "Use the table (--runtime-from table), or rebuild the libraries with `cmlens run`.")
    sizes = elf_sizes(out / "probe.elf")
    runner = (table.get("cpus", {}).get(cpu) or {}).get("runner_objects")
    runner_note = ""
    if not runner:       # not measured for this CPU yet: another CPU's (same sources, other code generation)
        other: tuple[str | None, Any] = next(((c, r["runner_objects"]) for c, r in table.get("cpus", {}).items() if r.get("runner_objects")),
                     (None, {}))
        runner = other[1]
        runner_note = (f"the stock runner's own objects are not measured for {cpu}: counted as on {other[0]}"
                       if other[0] else "the stock runner's own objects are not counted (not measured)")
    code = sizes["code"] + runner.get("code", 0)
    data = sizes["data"] + runner.get("data", 0)
    bss = sizes["bss"] + runner.get("bss", 0)
    parts = map_parts(out / "probe.map")
    parts["runner (stock arm_executor_runner, from the table)"] = runner.get("code", 0) + runner.get("data", 0)
    stack, heap = reservations()[0], heap_for(etdump_bytes, table)
    row = table.get("cpus", {}).get(cpu) or {}
    notes = [f"{op}: no portable/quantized kernel found in {lib} (not counted)" for op in missing]
    notes += [runner_note] if runner_note else []
    return RuntimeSize("libraries", cpu, code, data, bss, stack, heap,
                       {k: int(v) for k, v in row.get("stack_marks", {}).items()},
                       {k: int(v) for k, v in row.get("heap_marks", {}).items()}, parts,
                       [op for op in ops if op not in missing], True, notes, str(install))


_MAP_ENTRY = re.compile(r"^ (\.\S+|COMMON)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S.*)$")
_MAP_NAME_ONLY = re.compile(r"^ (\.\S+|COMMON)$")


def map_inputs(path: Path) -> list[tuple[str, str, int]]:
    """(input section, input file, bytes) of every section a GNU ld map file says the link kept."""
    out: list[tuple[str, str, int]] = []
    in_map, pending = False, ""
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("Linker script and memory map"):
            in_map = True
            continue
        if not in_map:
            continue
        if m := _MAP_NAME_ONLY.match(line):
            pending = m.group(1)
            continue
        m = _MAP_ENTRY.match(line)
        name = (m.group(1) if m and m.group(1) else pending) if m else ""
        pending = ""
        if m and name and int(m.group(2), 16):
            out.append((name, m.group(3).strip(), int(m.group(2), 16)))
    return out


def kind_of(section: str) -> str | None:
    """code / data / bss for an input section name (None: not part of the image's code or static RAM)."""
    if re.match(r"\.(text|rodata|ARM\.ex|init_array|fini_array|preinit_array|ctors|dtors|init$|fini$|eh_frame)", section):
        return "code"
    if re.match(r"\.(data|got|igot)", section):
        return "data"
    if re.match(r"\.(bss|sbss|tbss)|COMMON", section) and not re.search(r"allocator_sec|tensor_arena", section):
        return "bss"
    return None


def map_sizes(path: Path, file_pattern: re.Pattern[str]) -> dict[str, int]:
    """Kept code/data/bss bytes of the input files matching `file_pattern`."""
    out = {"code": 0, "data": 0, "bss": 0}
    for section, source, size in map_inputs(path):
        k = kind_of(section)
        if k and file_pattern.search(source):
            out[k] += size
    return out


def map_parts(path: Path) -> dict[str, int]:
    """Bytes of kept code + data input sections per part of the runtime, from a GNU ld map file."""
    parts = {name: 0 for name, _ in PARTS}
    for section, source, size in map_inputs(path):
        if kind_of(section) not in ("code", "data"):
            continue
        for name, pat in PARTS:
            if pat.search(source):
                parts[name] += size
                break
    return {k: v for k, v in parts.items() if v}


def runtime_for(cpu: str, ops: list[str], *, elf: str | Path | None = None, prefer: str = "auto",
                cache_root: Path | None = None, etdump_bytes: int | None = None,
                on_status: Callable[[str], None] | None = None) -> RuntimeSize | None:
    """The runtime around the model: the ELF's sections, else a link probe of this machine's libraries
    (prefer "auto"/"libraries"), else the shipped table. None: no figure for this CPU at all."""
    if elf is not None:
        return from_elf(elf_sizes(elf), cpu, str(elf))
    ops = portable_ops(ops)
    table = load_table()
    install = installed_libraries(cpu, cache_root) if prefer in ("auto", "libraries") else None
    if install is not None:
        key = cache_dir() / "link-probe" / "results.json"
        tag = hashlib.sha1(repr((cpu, ops, str(install), (install.parent / STAMP).stat().st_mtime, etdump_bytes,
                                 json.dumps({k: table.get(k) for k in ("runner", "heap_model")}, sort_keys=True),
                                 json.dumps((table.get("cpus", {}).get(cpu) or {}).get("runner_objects"))
                                 )).encode()).hexdigest()
        done = json.loads(key.read_text()) if key.is_file() else {}
        if tag in done:
            return RuntimeSize(**{k: v for k, v in done[tag].items() if k not in ("flash", "static_ram")})
        try:
            stamp = json.loads((install.parent / STAMP).read_text())
            if on_status:
                on_status(f"link probe: the runtime for {cpu} from {install}")
            start = time.monotonic()
            rt = probe(cpu, ops, install, table, et_root=Path(stamp["et_root"]) if stamp.get("et_root") else None,
                       etdump_bytes=etdump_bytes)
            rt.notes.append(f"link probe {time.monotonic() - start:.1f} s")
            done[tag] = rt.to_dict()
            key.parent.mkdir(parents=True, exist_ok=True)
            key.write_text(json.dumps(done))
            return rt
        except (CmlensError, OSError, ValueError, KeyError) as exc:
            if prefer == "libraries":
                raise
            if on_status:
                on_status(f"link probe failed ({getattr(exc, 'message', exc)}): using the shipped table")
    elif prefer == "libraries":
        raise BadInputError(f"No ExecuTorch libraries for {cpu} in {cache_root or cache_dir()}.",
                            f"Build them once with `cmlens run MODEL --target {cpu} --et-root PATH`, or use the table.")
    return from_table(cpu, ops, table, etdump_bytes)
