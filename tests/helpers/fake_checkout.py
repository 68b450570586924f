"""A tiny ExecuTorch-shaped checkout that backend_core.target.build.libraries drives exactly as it drives the real
one (`cmake --preset arm-baremetal`, the same -D options, `--target install`) with the real cmake, ninja and
arm-none-eabi-gcc: one kernel including one header, a CMSIS-NN tree beside it, ETDump as a define.
Used by tests/target_build/test_library_staleness.py and bench/noop_build_check.py (CI has no checkout)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

PRESETS = {"version": 3, "configurePresets": [{
    "name": "arm-baremetal", "generator": "Ninja",
    "cacheVariables": {"CMAKE_SYSTEM_NAME": "Generic", "CMAKE_C_COMPILER": "arm-none-eabi-gcc",
                       "CMAKE_TRY_COMPILE_TARGET_TYPE": "STATIC_LIBRARY"}}]}

CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(fake_executorch C)
set(srcs backends/cortex_m/ops/op_add.c)
if(FETCHCONTENT_SOURCE_DIR_CMSIS_NN)
  list(APPEND srcs ${FETCHCONTENT_SOURCE_DIR_CMSIS_NN}/Source/arm_add.c)
endif()
add_library(cortex_m_kernels STATIC ${srcs})
target_include_directories(cortex_m_kernels PRIVATE backends/cortex_m/ops)
if(EXECUTORCH_BUILD_DEVTOOLS)
  target_compile_definitions(cortex_m_kernels PRIVATE ET_EVENT_TRACER_ENABLED)
endif()
target_compile_options(cortex_m_kernels PRIVATE -mcpu=${TARGET_CPU})
file(WRITE ${CMAKE_BINARY_DIR}/executorch-config.cmake "# fake\\n")
install(TARGETS cortex_m_kernels DESTINATION lib)
install(FILES ${CMAKE_BINARY_DIR}/executorch-config.cmake DESTINATION lib/cmake/ExecuTorch)
"""

KERNEL = """#include "kernel_version.h"
#ifdef ET_EVENT_TRACER_ENABLED
const char cmlens_tracer[] = "etdump-on";
#else
const char cmlens_tracer[] = "etdump-off";
#endif
const char cmlens_kernel[] = KERNEL_VERSION;
int cortex_m_add(int a, int b) { return a + b; }
"""


def make_checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A git checkout with one kernel (and a header it includes) and a CMSIS-NN tree beside it."""
    et = tmp_path / "executorch"
    ops = et / "backends/cortex_m/ops"
    ops.mkdir(parents=True)
    (et / "CMakePresets.json").write_text(json.dumps(PRESETS))
    (et / "CMakeLists.txt").write_text(CMAKELISTS)
    (ops / "op_add.c").write_text(KERNEL)
    (ops / "kernel_version.h").write_text('#define KERNEL_VERSION "kernel-v1"\n')
    cmsis = tmp_path / "CMSIS-NN"
    (cmsis / "Source").mkdir(parents=True)
    (cmsis / "Source/arm_add.c").write_text('const char cmlens_cmsis[] = "cmsis-v1";\n')
    git = ["git", "-C", str(et), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "fake"], check=True)
    return et, cmsis
