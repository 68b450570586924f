"""Build ExecuTorch's stock Arm runner (examples/arm/executor_runner/arm_executor_runner.cpp from the
user's checkout) on the kernels/ board layer against the cached libraries (et_build.py), per model.

Two modes:
- baked: the .pte/.bpte is compiled into the firmware (`ET_PTE_FILE_PATH`), with only the portable
  ops it uses; one build directory per (libraries, board, model content), so the same model is a no-op;
- semihosting: the runner reads the model and inputs from the host (`-m model.bpte -i in.bin`), built
  once per (libraries, board, portable op set); a new model needs no rebuild if its ops are covered.
The cortex_m ops are always registered in full (ExecuTorch installs `cortex_m_ops_lib`).

Never stale: the directory name covers every option that changes a define (ETDump, intermediate outputs,
pool sizes, tolerances, op set, the board's flags and the build recipe), and every build runs
`cmake --build` (ninja): an edited runner source in the checkout, an edited board layer or rebuilt
libraries (the link depends on the installed .a files) are recompiled or relinked, never reused."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from backend_core.common.boards.table import Board
from backend_core.target.build.paths import KERNELS_DIR, cache_dir
from backend_core.target.build.speed import compiler_cache_env
from backend_core.target.build.libraries import EtLibraries
from backend_core.target.build.steps import check_build_tools, run_step
from backend_core.target.toolchain.process import LineCallback

RUNNER_SOURCE_DIR = KERNELS_DIR / "runner"
RUNNER_TARGET = "arm_executor_runner"
BUILD_RECIPE = (RUNNER_SOURCE_DIR / "CMakeLists.txt", KERNELS_DIR / "cmake" / "cmlens_board.cmake",
                KERNELS_DIR / "cmake" / "boards.cmake", KERNELS_DIR / "boards.json")
OWN_OPS_DIR = KERNELS_DIR / "ops"            # the project's own kernels (cmlens:: ops, cmlens_ops.yaml)
OWN_OPS_SOURCES = (OWN_OPS_DIR / "cmlens_ops.cpp",)


def own_ops(ops: list[str]) -> list[str]:
    """The program's cmlens:: ops: the runner then compiles kernels/ops/ (CMLENS_OWN_OPS)."""
    return sorted(op for op in ops if op.startswith("cmlens::"))


def portable_ops(ops: list[str]) -> list[str]:
    """The ops a portable/quantized kernel library must register (not cortex_m, not prim ops).
    dim_order_ops::* (`.contiguous()`, to(memory_format)) are portable kernels too (functions.yaml)."""
    return sorted({op for op in ops if op.startswith(("aten::", "dim_order_ops::", "quantized_decomposed::"))})


KERNEL_LIBRARIES = {   # op namespace prefix -> (yaml of the kernel registry, kernel sources) in the checkout
    "portable": ("kernels/portable/functions.yaml", "kernels/portable/cpu"),
    "quantized": ("kernels/quantized/quantized.yaml", "kernels/quantized/cpu"),
}


def _yaml_kernels(yaml_path: Path) -> dict[str, str]:
    """op ("view_copy.out", "dim_order_ops::_to_dim_order_copy.out") -> kernel function name."""
    import yaml

    out: dict[str, str] = {}
    for entry in yaml.safe_load(yaml_path.read_text()) or []:
        name = entry.get("op") or (entry.get("func") or "").split("(", 1)[0]
        kernels = entry.get("kernels") or []
        if name and kernels and kernels[0].get("kernel_name"):
            out[name.strip()] = kernels[0]["kernel_name"].rsplit("::", 1)[-1]
    return out


def _defining_file(sources: list[Path], func: str, op_base: str) -> Path | None:
    """The .cpp that defines kernel `func` (its first parameter is the KernelRuntimeContext; a call
    passes `ctx`), or defines it through one of the portable library's DEFINE_* macros (op_tanh.cpp:
    `DEFINE_UNARY_UFUNC_REALHBBF16_TO_FLOATHBF16(tanh_out, std::tanh)`; missing it left `tanh_out`
    undefined at the runner's link); op_<op_base>.cpp first, where it nearly always is."""
    name = re.escape(func)
    pattern = re.compile(rf"\b{name}\s*\(\s*(?:[\w:]*::)?(?:KernelRuntimeContext|RuntimeContext)\s*&"
                         rf"|^\s*DEFINE_\w+\(\s*{name}\s*,", re.MULTILINE)
    likely = [f for f in sources if f.stem == f"op_{op_base}"]
    for f in likely + [f for f in sources if f not in likely]:
        try:
            if pattern.search(f.read_text(errors="replace")):
                return f
        except OSError:
            continue
    return None


def kernel_sources(et_root: Path, ops: list[str]) -> dict[str, list[str]]:
    """{"portable": [.cpp, ...], "quantized": [...]}: the kernel sources of the checkout that the
    runner compiles when the libraries were built without the portable/quantized kernels
    (et_build slim): each op's defining file, plus the shared pattern/*.cpp when one of them includes
    pattern.h. An op no file defines is left out here; the link then names it."""
    root = Path(et_root)
    out: dict[str, list[str]] = {"portable": [], "quantized": []}
    wanted = {"portable": [o for o in portable_ops(ops) if not o.startswith("quantized_decomposed::")],
              "quantized": [o for o in portable_ops(ops) if o.startswith("quantized_decomposed::")]}
    for lib, names in wanted.items():
        if not names:
            continue
        yaml_rel, src_rel = KERNEL_LIBRARIES[lib]
        if not (root / yaml_rel).is_file():          # not a checkout with these kernels: the link will say
            continue
        table = _yaml_kernels(root / yaml_rel)
        sources = sorted((root / src_rel).glob("*.cpp"))
        found: list[Path] = []
        for op in names:
            short = op.split("::", 1)[1] if op.startswith(("aten::", "quantized_decomposed::")) else op
            func = table.get(short) or table.get(op)
            f = _defining_file(sources, func, op.split("::", 1)[-1].split(".", 1)[0]) if func else None
            if f is not None and f not in found:
                found.append(f)
        if lib == "portable" and any("pattern/pattern.h" in f.read_text(errors="replace") for f in found):
            found += sorted((root / src_rel / "pattern").glob("*.cpp"))
        out[lib] = [str(f) for f in found]
    return out


@dataclass
class RunnerRequest:
    """One runner firmware: board, libraries, model (baked) or op set (semihosting), options."""

    board: Board
    libs: EtLibraries
    model: Path | None = None               # .pte / .bpte to bake in; None with semihosting=True
    ops: list[str] = field(default_factory=list)
    semihosting: bool = False
    etdump: bool = False                    # event tracer: ETDump block in the UART log
    dump_intermediate_outputs: bool = False
    atol: float = 0.01
    rtol: float = 0.01
    build_root: Path | None = None          # default: cache_dir()/runner
    python: str | None = None               # default: the one the libraries were built with
    debug_buffer_size: int | None = None    # ET_DEBUG_BUFFER_SIZE (None: the runner's 2 MiB); debug_buffer.py
    method_pool: int | None = None          # bytes: ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE (None: default)
    temp_pool: int | None = None            # bytes: ..._SCRATCH_TEMP_ALLOCATOR_POOL_SIZE (None: 2 MiB)
    heap_size: int | None = None            # bytes: the board layer's __HEAP_SIZE (None: boards.json default)

    @property
    def bundle_io(self) -> bool:
        """.bpte models (and semihosting runners, which accept both) verify reference outputs."""
        return self.semihosting or (self.model is not None and self.model.suffix == ".bpte")

    def fingerprint(self) -> str:
        """Hash of what the build depends on, computed once per request: the build directory, the model
        copy and the ELF must name one directory even when a recipe file is edited mid-build (seen: a
        kernels/ commit during a runner build sent QEMU to a directory that was never built)."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            cached = self.__dict__["_fingerprint"] = self._compute_fingerprint()
        return cached

    def _compute_fingerprint(self) -> str:
        h = hashlib.sha256()
        if self.model is not None and not self.semihosting:
            h.update(self.model.read_bytes())
        h.update(repr((sorted(portable_ops(self.ops)), self.etdump, self.dump_intermediate_outputs,
                       self.atol, self.rtol, self.bundle_io, self.cpu_flags(), self.debug_buffer_size, self.method_pool, self.temp_pool, self.board.table_file, self.heap_size,
                       str(KERNELS_DIR.resolve()), self.compiles_kernels)).encode())   # one build tree per source tree
        for recipe in BUILD_RECIPE:          # a changed recipe must not reuse a directory configured by the old one
            h.update(recipe.read_bytes() if recipe.is_file() else b"")
        if own_ops(self.ops):                # programs without cmlens:: ops keep their directories
            h.update(repr(own_ops(self.ops)).encode())
        return h.hexdigest()[:12]

    @property
    def compiles_kernels(self) -> bool:
        """True when the libraries have no portable kernels (et_build slim): the runner compiles the
        kernels of its model's portable/quantized ops itself."""
        return not (Path(self.libs.install_dir) / "lib" / "libportable_kernels.a").is_file()

    def kernel_sources(self) -> dict[str, list[str]]:
        cached = self.__dict__.get("_kernel_sources")
        if cached is None:
            cached = self.__dict__["_kernel_sources"] = (kernel_sources(self.libs.request.et_root, self.ops)
                                                         if self.compiles_kernels else {})
        return cached

    @property
    def build_dir(self) -> Path:
        root = self.build_root if self.build_root is not None else cache_dir() / "runner"
        mode = "semihosting" if self.semihosting else "baked"
        # per library build (its directory: each define variant has its own), then per model and options
        return Path(root) / self.libs.request.root.name / f"{self.board.name}-{mode}-{self.fingerprint()}"

    @property
    def elf(self) -> Path:
        return self.build_dir / f"{RUNNER_TARGET}.elf"

    @property
    def model_copy(self) -> Path:
        """The model inside the build directory (a stable path for ET_PTE_FILE_PATH)."""
        suffix = self.model.suffix if self.model is not None else ".pte"
        return self.build_dir / f"model{suffix}"

    def cpu_flags(self) -> str:
        """The board's CPU/FPU/float-ABI flags (kernels/cmake/boards.cmake), for every compiled file."""
        return " ".join(self.board.gcc_flags)

    def defines(self) -> dict[str, str]:
        lib = self.libs.request
        d = {
            "CMAKE_TOOLCHAIN_FILE": str(KERNELS_DIR / "cmake" / "arm-none-eabi-gcc.cmake"),
            "CMLENS_BOARD": self.board.name,
            # an MCU's sizes on a QEMU board come with a table of their own (boards/sized.py)
            "CMLENS_BOARDS_JSON": self.board.table_file,
            "CMAKE_BUILD_TYPE": lib.build_type,
            "EXECUTORCH_ROOT": str(lib.et_root),
            "ET_INSTALL_DIR": str(self.libs.install_dir),
            "PYTHON_EXECUTABLE": str(self.python or lib.python),
            "ET_BUNDLE_IO": "ON" if self.bundle_io else "OFF",
            "ET_ATOL": f"{self.atol:g}",
            "ET_RTOL": f"{self.rtol:g}",
            "EXECUTORCH_ENABLE_EVENT_TRACER": "ON" if self.etdump else "OFF",
            "ET_DUMP_INTERMEDIATE_OUTPUTS": "ON" if self.dump_intermediate_outputs else "OFF",
            "CMLENS_PORTABLE_OPS": ",".join(portable_ops(self.ops)),
            "SEMIHOSTING": "ON" if self.semihosting else "OFF",
            "CMLENS_OWN_OPS": "ON" if own_ops(self.ops) else "OFF",
            # Every library the runner build compiles (the generated portable/quantized op libraries too,
            # which do not link the board layer) must use the board's float ABI, else the link fails with
            # "libcmlens_portable_ops_lib.a(...) does not use VFP register arguments" (layernorm_mlp, M55).
            "CMAKE_C_FLAGS": self.cpu_flags(),
            "CMAKE_CXX_FLAGS": self.cpu_flags() + ("" if self.debug_buffer_size is None
                                                   else f" -DET_DEBUG_BUFFER_SIZE={self.debug_buffer_size}"),
            "CMAKE_ASM_FLAGS": self.cpu_flags(),
        }
        if not self.semihosting:
            d["ET_PTE_FILE_PATH"] = str(self.model_copy)
        # Always passed, empty for the defaults: a reused build directory must not keep stale pool sizes.
        d["CMLENS_METHOD_POOL_SIZE"] = "" if self.method_pool is None else str(self.method_pool)
        d["CMLENS_TEMP_POOL_SIZE"] = "" if self.temp_pool is None else str(self.temp_pool)
        d["CMLENS_HEAP_SIZE"] = "" if self.heap_size is None else str(self.heap_size)
        src = self.kernel_sources()
        d["CMLENS_PORTABLE_SOURCES"] = ",".join(src.get("portable", []))
        d["CMLENS_QUANTIZED_SOURCES"] = ",".join(src.get("quantized", []))
        return d


def runner_configure_command(req: RunnerRequest, cmake: str = "cmake", ninja: str | None = None) -> list[str]:
    """`cmake -G Ninja -S kernels/runner -B <build dir> -D...`."""
    argv = [cmake, "-G", "Ninja", "-S", str(RUNNER_SOURCE_DIR), "-B", str(req.build_dir)]
    if ninja:
        argv.append(f"-DCMAKE_MAKE_PROGRAM={ninja}")
    return argv + [f"-D{k}={v}" for k, v in req.defines().items()]


def runner_build_command(req: RunnerRequest, cmake: str = "cmake") -> list[str]:
    return [cmake, "--build", str(req.build_dir), "--target", RUNNER_TARGET]


@dataclass
class RunnerBuild:
    request: RunnerRequest
    elf: Path
    configure_s: float
    build_s: float
    reused: bool                    # the build directory existed (same model and options)


def build_runner(req: RunnerRequest, *, on_line: LineCallback | None = None,
                 cancel_event: threading.Event | None = None,
                 env: Mapping[str, str] | None = None) -> RunnerBuild:
    """Configure (first time) and build the runner; BuildError / ToolMissingError / Cancelled."""
    cancel_event = cancel_event or threading.Event()
    root = req.build_root if req.build_root is not None else cache_dir()
    env = compiler_cache_env(dict(os.environ if env is None else env), Path(root).parent if req.build_root else root)
    cmake, ninja = check_build_tools(env)
    emit = on_line or (lambda stream, line: None)
    req.build_dir.mkdir(parents=True, exist_ok=True)
    if req.model is not None and not req.semihosting:
        if not req.model_copy.is_file() or req.model_copy.read_bytes() != req.model.read_bytes():
            shutil.copyfile(req.model, req.model_copy)
    reused = (req.build_dir / "build.ninja").is_file()
    configure_s = 0.0
    if not reused:
        configure_s = run_step(runner_configure_command(req, cmake, ninja), "runner configure",
                               emit=emit, cancel_event=cancel_event, env=env)
    start = time.monotonic()
    run_step(runner_build_command(req, cmake), "runner build", emit=emit, cancel_event=cancel_event, env=env,
             progress=f"runner for {req.board.name}")
    return RunnerBuild(req, req.elf, configure_s, time.monotonic() - start, reused)
