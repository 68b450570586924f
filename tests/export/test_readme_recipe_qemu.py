"""Opt-in (CMLENS_TEST_ET_ROOT, CMLENS_TEST_CMSIS_NN). Issue 44, item 7: a user's own project made from the
bundle's README failed after 145 s (`ModuleNotFoundError: No module named 'executorch'`: the CMake used
the system python3), and the README said nothing of the CPU flags, the linker script and startup, the
QEMU command or the reference output. Here a user follows the README alone, in an empty folder outside
the repository: a startup file, a linker script for the MPS3 AN547 (Cortex-M55) and a 30-line main.c of
their own -- none of cmlens's kernels/ board layer -- the README's CMakeLists.txt and configure command,
with a PATH whose python3 is the system's; then the README's QEMU command, and the output compared with
the bundle's shipped expected bytes (reference_output_0.bin)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.cli import main

ET_ROOT = os.environ.get("CMLENS_TEST_ET_ROOT")
CMSIS_NN = os.environ.get("CMLENS_TEST_CMSIS_NN")
pytestmark = pytest.mark.skipif(not (ET_ROOT and CMSIS_NN), reason="needs an ExecuTorch checkout and CMSIS-NN: set "
                                "CMLENS_TEST_ET_ROOT and CMLENS_TEST_CMSIS_NN")

MAIN_C = """#include <stdio.h>
#include <string.h>
#include "cmlens_model.h"
#include "cmlens_reference.h"

static cmlens_model_output_0_t out0[CMLENS_MODEL_OUTPUT_0_NUMEL] __attribute__((aligned(16)));

int main(void) {
  void* outs[] = {out0};
  int status = cmlens_model_init();
  if (status == 0) status = cmlens_model_run_n(cmlens_reference_inputs, outs);
  printf("STATUS %d\\n", status);
  if (status != 0) return 1;
  printf("OUT ");
  for (unsigned i = 0; i < sizeof(out0); ++i) printf("%02x", ((const unsigned char*)out0)[i]);
  printf("\\n%s\\n", memcmp(out0, cmlens_reference_output_0, CMLENS_REFERENCE_OUTPUT_0_BYTES) ? "MISMATCH" : "MATCH");
  return 0;
}
"""

# The user's own board support: a vector table and reset handler, and newlib's few syscalls on the
# AN547's CMSDK UART0 (0x49303000) with a semihosting exit.
STARTUP_C = """#include <stdint.h>
#include <stdlib.h>
extern uint32_t __StackTop, __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern int main(void);
extern void __libc_init_array(void);
void Reset_Handler(void);
static void Default_Handler(void) { for (;;) {} }
__attribute__((used, section(".vectors"))) void (*const vectors[32])(void) = {
  (void (*)(void))&__StackTop, Reset_Handler, [2 ... 31] = Default_Handler};
void _init(void) {}
void _fini(void) {}
void* __dso_handle = &__dso_handle;
void Reset_Handler(void) {
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20;            /* CPACR: FPU and MVE on */
  __asm volatile("dsb\\n\\tisb");
  for (uint32_t *s = &__data_load, *d = &__data_start; d < &__data_end;) *d++ = *s++;
  for (uint32_t* d = &__bss_start; d < &__bss_end;) *d++ = 0;
  __libc_init_array();
  exit(main());
}
"""

SYSCALLS_C = """#include <stdint.h>
#define UART0 0x49303000u
#define REG(off) (*(volatile uint32_t*)(UART0 + (off)))
int _write(int fd, const char* p, int n) {
  (void)fd;
  if (!(REG(8) & 1u)) { REG(0x10) = 16u; REG(8) = 1u; }    /* BAUDDIV, CTRL: TX enable */
  for (int i = 0; i < n; ++i) { while (REG(4) & 1u) {} REG(0) = (unsigned char)p[i]; }
  return n;
}
void _exit(int code) {                                         /* semihosting SYS_EXIT */
  register int r0 __asm("r0") = 0x18;
  register int r1 __asm("r1") = code == 0 ? 0x20026 : 0x20024;
  __asm volatile("bkpt 0xab" : : "r"(r0), "r"(r1));
  for (;;) {}
}
"""

LINKER_LD = """MEMORY {
  ITCM (rx)  : ORIGIN = 0x10000000, LENGTH = 512K   /* the core's reset vector table */
  DTCM (rw)  : ORIGIN = 0x30000000, LENGTH = 512K
  DDR  (rwx) : ORIGIN = 0x70000000, LENGTH = 16M    /* stands in for the board's flash */
}
ENTRY(Reset_Handler)
SECTIONS {
  .vectors : { KEEP(*(.vectors)) } > ITCM
  .text : { *(.text*) KEEP(*(.init)) KEEP(*(.fini)) *(.rodata*) *(.ARM.extab*)
            . = ALIGN(16); KEEP(*(network_model_sec)) } > DDR
  .ARM.exidx : { __exidx_start = .; *(.ARM.exidx*) __exidx_end = .; } > DDR
  .init_array : { __preinit_array_start = .; KEEP(*(.preinit_array)) __preinit_array_end = .;
                  __init_array_start = .; KEEP(*(SORT(.init_array.*))) KEEP(*(.init_array)) __init_array_end = .;
                  __fini_array_start = .; KEEP(*(.fini_array*)) __fini_array_end = .; } > DDR
  .data : { . = ALIGN(4); __data_start = .; *(.data*) *(.got*) . = ALIGN(4); __data_end = .; } > DTCM AT > DDR
  __data_load = LOADADDR(.data);
  .bss (NOLOAD) : { . = ALIGN(4); __bss_start = .; *(.bss*) *(COMMON) . = ALIGN(4); __bss_end = .; } > DTCM
  .heap (NOLOAD) : { . = ALIGN(8); end = .; . += 0x10000; } > DDR
  __StackTop = ORIGIN(DTCM) + LENGTH(DTCM);
}
"""


def _readme_block(readme: str, lang: str, containing: str) -> str:
    """A fenced block of the README, as the user copies it (indentation of its list item removed)."""
    for m in re.finditer(rf"^( *)```{lang}\n(.*?)^\1```", readme, re.M | re.S):
        body = "\n".join(line[len(m.group(1)):] for line in m.group(2).splitlines())
        if containing in body:
            return body
    raise AssertionError(f"no ```{lang} block with {containing!r} in the README")


def _users_shell_env() -> dict[str, str]:
    """The user's shell: no virtual environment on PATH (python3 is the system's, without executorch)."""
    venv = str(Path(os.sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return {**env, "PATH": path}


def test_a_users_project_built_from_the_readme_alone_matches_the_shipped_output(tmp_path: Path) -> None:
    bundle = tmp_path / "ds_cnn_bundle"
    assert main(["export", "ds_cnn", "--target", "cortex-m55", "-o", str(bundle), "--et-root", ET_ROOT,
                 "--cmsis-nn", CMSIS_NN, "--quiet"]) == 0
    readme = (bundle / "README.md").read_text()
    recipe = json.loads((bundle / "bundle.json").read_text())["recipe"]
    project = tmp_path / "my_firmware"                      # empty, outside the repository
    project.mkdir()
    for name, text in (("main.c", MAIN_C), ("startup.c", STARTUP_C), ("syscalls.c", SYSCALLS_C), ("app.ld", LINKER_LD)):
        (project / name).write_text(text)
    assert len(MAIN_C.strip().splitlines()) <= 30
    lists = _readme_block(readme, "cmake", "add_subdirectory(path/to/this/folder cmlens_model)")
    (project / "CMakeLists.txt").write_text(lists.replace("path/to/this/folder", str(bundle)))
    configure = _readme_block(readme, "sh", "cmake -G Ninja")
    install = recipe["et_install_dir"]                       # the README names the exporting machine's install
    assert install and f"`{install}`" in readme
    values = {"path/to/this/folder": str(bundle), "/path/to/executorch": ET_ROOT, "/path/to/CMSIS-NN": CMSIS_NN,
              "/path/to/an/install": install}
    commands = [re.sub(r"\s+#.*$", "", line) for line in configure.replace("\\\n", " ").splitlines() if line.strip()]
    env = _users_shell_env()
    assert subprocess.run(["sh", "-c", "python3 -c 'import executorch'"], env=env, capture_output=True).returncode != 0
    for command in commands:
        for placeholder, value in values.items():
            command = command.replace(placeholder, value)
        done = subprocess.run(command.split(), cwd=project, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    assert not (project / "build" / "cmlens_executorch").exists()     # the libraries were reused, not rebuilt
    qemu = _readme_block(readme, "sh", "qemu-system-arm").strip().split()
    run = subprocess.run(qemu, cwd=project, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "STATUS 0" in run.stdout and "MATCH" in run.stdout.split() and "MISMATCH" not in run.stdout, run.stdout
    got = bytes.fromhex(re.search(r"OUT ([0-9a-f]+)", run.stdout).group(1))
    assert got == (bundle / "reference_output_0.bin").read_bytes()          # the shipped expected bytes


def test_the_configure_refuses_a_python_without_executorch_in_seconds(tmp_path: Path) -> None:
    """The 145-second failure, now a configure error naming the variable and the fix."""
    system_python = shutil.which("python3", path=_users_shell_env()["PATH"])
    if system_python is None:
        pytest.skip("no system python3")
    bundle = tmp_path / "b"
    assert main(["export", "ds_cnn", "--target", "cortex-m55", "-o", str(bundle), "--et-root", ET_ROOT,
                 "--cmsis-nn", CMSIS_NN, "--quiet"]) == 0
    project = tmp_path / "p"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(f"cmake_minimum_required(VERSION 3.21)\nproject(p C CXX)\n"
                                            f"add_subdirectory({bundle} cmlens_model)\n")
    done = subprocess.run(["cmake", "-G", "Ninja", "-S", str(project), "-B", str(project / "build"),
                           f"-DCMAKE_TOOLCHAIN_FILE={bundle}/toolchain.cmake", f"-DCMLENS_ET_ROOT={ET_ROOT}",
                           f"-DCMLENS_PYTHON={system_python}"], env=_users_shell_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    text = done.stdout + done.stderr
    assert "cannot import executorch" in text and "-DCMLENS_PYTHON=" in text
    assert not (project / "build" / "cmlens_executorch").exists()            # refused before any library build
