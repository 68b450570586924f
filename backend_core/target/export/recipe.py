"""The bundle README's recipe: everything a user needs to build the bundle into a firmware of their own
and run it, and nothing that only cmlens's own board layer (kernels/) provides.

Why this module (issue 44, item 7): a user's project built from the earlier README failed after 145 s
with `ModuleNotFoundError: No module named 'executorch'` (the CMake used the system python3), rebuilt the
libraries in their folder (the README did not name CMLENS_ET_INSTALL_DIR), and had to guess the CPU
flags, what the linker script and startup must do, and how to run on QEMU. The facts are recorded from
the exporting environment (bundle.json "recipe"), the README is written from them, and
tests/export/test_readme_recipe_qemu.py follows the README in an empty folder with its own startup,
linker script and main.c."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def _qemu(cpu: str) -> dict[str, Any] | None:
    from backend_core.common.boards.table import board_for
    from backend_core.common.errors import CmlensError

    try:
        board = board_for(cpu)
    except CmlensError:
        return None
    argv = ["qemu-system-arm", "-M", board.machine, "-nographic", "-semihosting-config", "enable=on,target=native",
            "-kernel", "build/app.elf"]
    return {"machine": board.machine, "board": board.name, "uart_base": hex(board.uart_base), "argv": argv,
            "memory": [{"name": r.name, "origin": hex(r.origin), "length": hex(r.length), "access": r.access}
                       for r in board.memory]}


def _install(spec: Any) -> str | None:
    """The libraries `cmlens run` / `export --check` built for this checkout and CPU, when they exist."""
    from backend_core.target.build.libraries import EtLibRequest

    try:
        req = EtLibRequest(Path(spec.et_root), spec.target, "Release", spec.cmsis_nn)
        done = req.install_dir / "lib" / "cmake" / "ExecuTorch" / "ExecuTorchTargets.cmake"
        return str(req.install_dir) if done.is_file() else None
    except (OSError, ValueError):
        return None


def recipe_facts(spec: Any, facts: Any, pools: Any) -> dict[str, Any]:
    """bundle.json's "recipe": the exporting environment's tools and the target's flags and board."""
    from backend_core.common.boards.table import gcc_flags

    runtime = spec.runtime or {}
    return {"cpu": spec.target, "cpu_flags": list(gcc_flags(spec.target)), "toolchain_file": "toolchain.cmake",
            "python": spec.python, "flatc": spec.flatc, "et_root": str(spec.et_root), "et_commit": spec.et_commit,
            "cmsis_nn": str(spec.cmsis_nn) if spec.cmsis_nn else None, "cmsis_tag": spec.cmsis_tag,
            "et_install_dir": _install(spec), "stack_bytes": runtime.get("stack"),
            "pte_bytes": len(facts.pte), "pool_bytes": pools.ram_bytes, "qemu": _qemu(spec.target)}


def _cmake_lists(r: dict[str, Any]) -> list[str]:
    return ["```cmake", "cmake_minimum_required(VERSION 3.21)", "project(app C CXX)",
            "add_subdirectory(path/to/this/folder cmlens_model)   # after project(): it needs the cross compiler",
            "add_executable(app main.c startup.c syscalls.c)",
            "target_link_libraries(app PRIVATE cmlens_model)",
            "target_link_options(app PRIVATE -T${CMAKE_CURRENT_SOURCE_DIR}/app.ld -nostartfiles --specs=nosys.specs",
            "                    -Wl,--gc-sections -Wl,-Map=app.map)",
            "set_target_properties(app PROPERTIES SUFFIX .elf)", "```"]


def recipe_lines(info: dict[str, Any]) -> list[str]:
    """The README's "Build it into your firmware" and "Check the port" sections."""
    r = info.get("recipe") or {}
    cpu, flags = r.get("cpu", info["target"]), " ".join(r.get("cpu_flags", []))
    install = r.get("et_install_dir")
    L = ["## Build it into your firmware", "",
         "Needs: arm-none-eabi-gcc with newlib (made with GCC 12.2), CMake >= 3.21, Ninja, your ExecuTorch "
         f"checkout (commit {r.get('et_commit') or 'unknown'}; the folder must be named `executorch`), CMSIS-NN "
         f"(at {r.get('cmsis_tag') or 'the commit backends/cortex_m/CMakeLists.txt pins'}), and a Python with the "
         "`executorch` package for ExecuTorch's code generator (the system `python3` has none: the build would "
         "fail with `ModuleNotFoundError: No module named 'executorch'`).", "",
         "1. **Python and flatc.** `cmlens_model.cmake` uses the ones of the environment that made this bundle:",
         f"   `CMLENS_PYTHON={r.get('python') or '(none recorded)'}` and "
         f"`CMLENS_FLATC={r.get('flatc') or '(none: built from source)'}`. On another machine pass "
         "`-DCMLENS_PYTHON=/path/to/venv/bin/python` (any environment with `pip install executorch`); the "
         "configure checks it before anything is built. `-DCMLENS_FLATC=` (empty) builds flatc from the checkout.",
         f"2. **CPU flags: `{flags}`** for every object of the firmware (yours, the bundle's and ExecuTorch's "
         "libraries, which are built for the same CPU and float ABI). `toolchain.cmake` in this folder sets "
         "them with arm-none-eabi-gcc: `-DCMAKE_TOOLCHAIN_FILE=path/to/this/folder/toolchain.cmake`, or put "
         "them in your own toolchain file.",
         "3. **Your CMakeLists.txt** (startup.c, syscalls.c and app.ld are yours: see step 5):", ""]
    L += ["   " + x for x in _cmake_lists(r)]
    L += ["", "4. **Configure and build:**", "", "   ```sh",
          "   cmake -G Ninja -S . -B build -DCMAKE_TOOLCHAIN_FILE=path/to/this/folder/toolchain.cmake \\",
          "         -DCMLENS_ET_ROOT=/path/to/executorch -DCMLENS_CMSIS_NN=/path/to/CMSIS-NN \\",
          "         -DCMLENS_ET_INSTALL_DIR=/path/to/an/install   # optional, see below",
          "   cmake --build build", "   ```", "",
          f"   Without `CMLENS_ET_INSTALL_DIR` the first configure builds ExecuTorch's libraries for {cpu} into "
          "`build/cmlens_executorch/install` (minutes, once per build folder). To reuse them in another project or "
          "build folder, pass that folder (or any install of the same checkout, CPU and CMSIS-NN) as "
          "`-DCMLENS_ET_INSTALL_DIR=`." + (f" The libraries cmlens built for {cpu} on the machine that made this "
                                          f"bundle: `{install}`." if install else ""),
          "5. **What your startup code and linker script must provide** (the bundle assumes nothing else):",
          f"   - `{info['model_section']}`: the program (`cmlens_model_pte[]`, {r.get('pte_bytes', 0):,} B, "
          "aligned 16, read in place): place it in flash (read-only), e.g. `KEEP(*(network_model_sec))` in "
          "`.rodata`'s output section. Define `CMLENS_MODEL_PTE_SECTION` before `model_pte.h` to rename it.",
          f"   - `.bss.cmlens_*`: the static pools ({r.get('pool_bytes', 0):,} B in RAM, aligned 16; "
          "`*(.bss*)` catches them, or give them a NOLOAD region of their own). No heap: the bundle never mallocs.",
          "   - `.ARM.extab*` and `.ARM.exidx` in flash near `.text` (their offsets reach +-1 GiB only), the latter "
          "between `__exidx_start` and `__exidx_end` (libgcc's unwinder, linked by libstdc++, references them "
          "even with `-fno-exceptions`).",
          "   - `.data` copied from flash and `.bss` zeroed before `main()`; keep `.got*` inside `.data` if your link "
          "has one.",
          "   - Static constructors run before `cmlens_model_init()`: call `__libc_init_array()` in the reset "
          "handler and keep `.init_array` / `.preinit_array` (`KEEP(...)`, with the `__init_array_start`/`_end` "
          "symbols newlib reads). The selected kernels register themselves there; without it "
          "`cmlens_model_init()` returns 0x14 (OperatorMissing).",
          "   - With `-nostartfiles` (your own reset handler): define `void _init(void) {}`, `void _fini(void) {}` "
          "(newlib's `__libc_init_array` calls them) and `void* __dso_handle = &__dso_handle;` (C++ static "
          "objects register their destructors against it).",
          "   - The FPU" + (" and MVE" if "m55" in cpu or "m85" in cpu else "") + " enabled (CPACR CP10/CP11) before "
          "any of this code runs, when the CPU has one.",
          "   - `end` (heap start for newlib's `_sbrk`) and a `_write` (UART) if you use printf; ExecuTorch's log "
          "messages go to `fprintf(stderr)` and errors to `abort()`. `--specs=nosys.specs` stubs the rest.",
          f"   - Stack: at least {r['stack_bytes']:,} B (the runtime estimate)." if r.get("stack_bytes") else
          "   - Stack: a few KiB (ExecuTorch's stock runner measured 2,792 B on M55).", ""]
    q = r.get("qemu")
    if q:
        regions = ", ".join(f"{m['name']} {m['origin']} ({m['length']}, {m['access']})" for m in q["memory"])
        L += ["6. **Run it on QEMU** (board `" + q["machine"] + f"`: {regions}; CMSDK UART0 at {q['uart_base']} on "
              "`-nographic`'s stdio; semihosting for the exit):", "", "   ```sh", "   " + " ".join(q["argv"]),
              "   ```", ""]
    else:
        L += [f"6. QEMU has no board for {cpu}: run it on your board or an FVP.", ""]
    L += ["## Check the port", ""]
    ref = info.get("reference")
    if ref:
        L += [f"`{ref['header']}` holds a reference input and the output bytes a correct port computes from it "
              f"({ref['from']}); `{', '.join(ref['inputs'] + ref['outputs'])}` are the same bytes as files. In the "
              "runtime's layout (each tensor's dim order, see the table below), so compare bytes:", "", "```c",
              '#include "cmlens_reference.h"',
              "static cmlens_model_output_0_t out0[CMLENS_MODEL_OUTPUT_0_NUMEL] __attribute__((aligned(16)));",
              "void* outs[] = {out0};",
              "int ok = cmlens_model_init() == 0 && cmlens_model_run_n(cmlens_reference_inputs, outs) == 0",
              "         && memcmp(out0, cmlens_reference_output_0, CMLENS_REFERENCE_OUTPUT_0_BYTES) == 0;",
              "```", ""]
    else:
        L += ["No reference input: the bundle was made from a `.pte`, which carries none (export the model source "
              "or its `.bpte` to get one).", ""]
    return L
