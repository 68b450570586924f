"""Every library a runner build compiles gets the board's CPU/FPU/float-ABI flags.

Found on layernorm_mlp (portable aten::native_layer_norm + clamp) on QEMU M55: the runner's generated
`cmlens_portable_ops_lib` (ExecuTorch's gen_operators_lib, which does not link the board layer) was
compiled for the compiler's default soft-float Armv4T and the link failed with
"libcmlens_portable_ops_lib.a(...) does not use VFP register arguments". CI has no ExecuTorch, so this
builds the same shape of project for real: the board layer, a static library that does NOT link
cmlens_board, a firmware that calls float code in it."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from backend_core.common.boards.table import board_for
from backend_core.target.build.paths import KERNELS_DIR
from backend_core.target.build.libraries import EtLibraries, EtLibRequest
from backend_core.target.build.runner import RunnerRequest, runner_configure_command

PROJECT = """cmake_minimum_required(VERSION 3.20)
project(flags_probe C CXX)
set(CMLENS_KERNELS_DIR "{kernels}")
include({kernels}/cmake/cmlens_board.cmake)
# like gen_operators_lib(): a library created after the board layer that does not link cmlens_board
add_library(fp_ops STATIC fp_ops.cpp)
cmlens_add_firmware(probe SOURCES main.c)
target_link_libraries(probe PRIVATE fp_ops)
"""
FP_OPS = 'extern "C" float fp_scale(float x, float s) { return x * s + 0.5f; }\n'
MAIN = """#include <stdio.h>
float fp_scale(float x, float s);
int main(void) { printf("%d\\n", (int)fp_scale(3.0f, 2.0f)); return 0; }
"""


def _libs(tmp_path: Path) -> EtLibraries:
    root = tmp_path / "src" / "executorch"
    root.mkdir(parents=True)
    req = EtLibRequest(root, "cortex-m55", "Release", python="/venv/bin/python", cache_root=tmp_path / "cache",
                       commit="0" * 40, jobs=2, cmsis_nn=tmp_path / "CMSIS-NN")
    return EtLibraries(req, req.install_dir, True, 0.0, 0.0)


@pytest.mark.parametrize("target, flags", [
    ("cortex-m55", "-mcpu=cortex-m55 -mfloat-abi=hard -mthumb"),
    ("cortex-m4", "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard -mthumb"),
])
def test_runner_configure_passes_the_cpu_flags_to_every_language(tmp_path: Path, target: str, flags: str) -> None:
    req = RunnerRequest(board_for(target), _libs(tmp_path), ops=["aten::native_layer_norm.out"],
                        semihosting=True, build_root=tmp_path / "runner")
    d = dict(a[2:].split("=", 1) for a in runner_configure_command(req)[7:])
    assert d["CMAKE_C_FLAGS"] == d["CMAKE_CXX_FLAGS"] == d["CMAKE_ASM_FLAGS"] == flags


def test_runner_build_dir_follows_the_flags_and_the_recipe(tmp_path: Path, monkeypatch) -> None:
    """A directory configured with other flags or an older recipe is not reused (its build.ninja
    would keep the old, wrong flags)."""
    import backend_core.target.build.runner as rb

    libs = _libs(tmp_path)
    m55 = RunnerRequest(board_for("cortex-m55"), libs, semihosting=True, build_root=tmp_path / "r")
    m55_fvp = RunnerRequest(board_for("cortex-m55", "fvp"), libs, semihosting=True, build_root=tmp_path / "r")
    assert m55.fingerprint() == m55_fvp.fingerprint()                  # same flags, other board name
    before = m55.fingerprint()
    recipe = tmp_path / "CMakeLists.txt"
    recipe.write_text("# changed\n")
    monkeypatch.setattr(rb, "BUILD_RECIPE", rb.BUILD_RECIPE + (recipe,))
    again = RunnerRequest(board_for("cortex-m55"), libs, semihosting=True, build_root=tmp_path / "r")
    assert again.fingerprint() != before
    # one request keeps one directory: its build, model copy and ELF agree even if a recipe is edited
    # while it builds (seen: QEMU sent to a directory that was never built)
    assert m55.fingerprint() == before and m55.elf.parent == m55.build_dir


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m4"])
def test_a_library_outside_the_board_layer_gets_the_float_abi(toolchain, tmp_path: Path, target: str) -> None:
    board = board_for(target)
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(PROJECT.format(kernels=KERNELS_DIR.as_posix()))
    (src / "fp_ops.cpp").write_text(FP_OPS)
    (src / "main.c").write_text(MAIN)
    build = tmp_path / "build"
    cfg = subprocess.run(["cmake", "-G", "Ninja", "-S", str(src), "-B", str(build),
                          f"-DCMAKE_TOOLCHAIN_FILE={KERNELS_DIR / 'cmake' / 'arm-none-eabi-gcc.cmake'}",
                          f"-DCMLENS_BOARD={board.name}"], capture_output=True, text=True, timeout=120)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    res = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr                # was: "does not use VFP register arguments"
    readelf = shutil.which("arm-none-eabi-readelf")
    if readelf:
        attrs = subprocess.run([readelf, "-A", str(build / "libfp_ops.a")], capture_output=True, text=True).stdout
        assert "Tag_ABI_VFP_args: VFP registers" in attrs
        arch = {"cortex-m55": "v8.1-M.mainline", "cortex-m4": "v7E-M"}[target]
        assert f"Tag_CPU_arch: {arch}\n" in attrs, attrs
