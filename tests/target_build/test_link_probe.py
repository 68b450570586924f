"""The link probe (backend_core/target/build/link_probe.py) on archives built here with the real toolchain:
it links like the runner build (board layer, --gc-sections, roots), so a kernel the op set names is
counted by its kept bytes and a function nothing reaches is not. The real ExecuTorch libraries are
measured in tests/memory/test_runtime.py's shipped-table check and in the closing note."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from backend_core.target.build.link_probe import map_parts, probe

CORE = """
namespace executorch { namespace runtime {
volatile int sink[64];
__attribute__((noinline)) int used_entry(int x) { for (int i = 0; i < 64; i++) sink[i] = x * i + 3; return sink[7]; }
__attribute__((noinline)) int never_called(int x) { int s = 0; for (int i = 0; i < 500; i++) s += sink[i % 64] * x; return s; }
}}
"""
KERNELS = """
namespace torch { namespace executor { namespace native {
volatile int out[256];
int relu_out(int x) { for (int i = 0; i < 256; i++) out[i] = x > i ? x - i : 0; return out[3]; }
int add_out(int a, int b) { for (int i = 0; i < 256; i++) out[i] = a + b * i; return out[5]; }
}}}
"""
YAML = """- op: relu.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::relu_out

- op: add.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::add_out
"""

pytestmark = pytest.mark.skipif(shutil.which("arm-none-eabi-g++") is None, reason="needs gcc-arm-none-eabi")


def _archive(tmp: Path, name: str, src: str) -> Path:
    cpp, obj = tmp / f"{name}.cpp", tmp / f"{name}.o"
    cpp.write_text(src)
    subprocess.run(["arm-none-eabi-g++", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
                    "-O2", "-ffunction-sections", "-fdata-sections", "-c", str(cpp), "-o", str(obj)], check=True)
    lib = tmp / "install" / "lib" / f"lib{name}.a"
    lib.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["arm-none-eabi-ar", "rcs", str(lib), str(obj)], check=True)
    return obj


def _size_of(obj: Path, symbol: str) -> int:
    out = subprocess.run(["arm-none-eabi-nm", "-S", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[1], 16) for line in out.splitlines() if line.rstrip().endswith(symbol))


def test_probe_counts_kept_bytes_of_the_ops_kernels_and_not_the_unreached(tmp_path: Path) -> None:
    core = _archive(tmp_path, "executorch_core", CORE)
    kern = _archive(tmp_path, "portable_kernels", KERNELS)
    et = tmp_path / "executorch"
    (et / "kernels" / "portable").mkdir(parents=True)
    (et / "kernels" / "portable" / "functions.yaml").write_text(YAML)
    table = {"runner": {"undefined": ["_ZN10executorch7runtime10used_entryEi"]},
             "cpus": {"cortex-m4": {"runner_objects": {"code": 1000, "data": 8, "bss": 4}}}}
    install, work = tmp_path / "install", tmp_path / "work"
    base = probe("cortex-m4", [], install, table, et_root=et, work=work)
    relu = probe("cortex-m4", ["aten::relu.out"], install, table, et_root=et, work=work)
    both = probe("cortex-m4", ["aten::relu.out", "aten::add.out"], install, table, et_root=et, work=work)
    relu_bytes = _size_of(kern, "relu_out(int)")
    add_bytes = _size_of(kern, "add_out(int, int)")
    assert relu_bytes <= relu.code - base.code <= relu_bytes + 8          # + alignment
    assert add_bytes <= both.code - relu.code <= add_bytes + 8
    assert relu.bss - base.bss == 256 * 4                                    # out[] comes with the kernel
    assert relu.ops == ["aten::relu.out"] and relu.source == "libraries"
    # the core's reached function is in, the unreached one is not (gc-sections, as in the runner build)
    maps = sorted(work.glob("probe-cortex-m4-*/probe.map"))
    text = "\n".join(m.read_text() for m in maps)
    assert "used_entry" in text
    kept = [line for m in maps for line in m.read_text().split("Linker script and memory map", 1)[1].splitlines()
            if "never_called" in line]
    assert kept == [], kept
    assert base.code >= _size_of(core, "executorch::runtime::used_entry(int)") + 1000   # + the runner's own (table)
    parts = map_parts(maps[0])
    assert parts.get("board layer", 0) > 0 and parts.get("ExecuTorch runtime", 0) > 0
    missing = probe("cortex-m4", ["aten::nonexistent.out"], install, table, et_root=et, work=work)
    assert missing.code == base.code and "aten::nonexistent.out" in missing.notes[0]
