"""Opt-in (needs an ExecuTorch checkout and CMSIS-NN: CMLENS_TEST_ET_ROOT, CMLENS_TEST_CMSIS_NN): the bundle
`cmlens export` writes, copied into an empty folder outside the repository with a 20-line main.c and a
CMakeLists.txt of the test's own, builds with arm-none-eabi-gcc and runs on QEMU with outputs identical,
byte for byte, to the lowered program run on the host -- for ds_cnn on stm32f746 (M7) and on cortex-m55.
The firmware's measured RAM pools equal the bundle's figures and its flash is within the bundle's
stated figure. The op list is minimal: drop any one op and the link fails, naming it.

The kernels/ board layer stands in for the user's startup code and UART; the ExecuTorch libraries are
the ones `cmlens run` caches for the checkout and CPU (CMLENS_ET_INSTALL_DIR), built here if missing."""
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
#include "cmlens_model.h"
#include "sample.h"   /* float sample_input[], the bundled test input */

static float output[CMLENS_MODEL_OUTPUT_0_NUMEL];

int main(void) {
  int status = cmlens_model_init();
  if (status == 0) status = cmlens_model_run(sample_input, output);
  printf("STATUS %d\\n", status);
  if (status != 0) return 1;
  const unsigned char* bytes = (const unsigned char*)output;
  printf("OUT ");
  for (unsigned i = 0; i < sizeof(output); ++i) printf("%02x", bytes[i]);
  printf("\\nUSED %u OF %u\\n", (unsigned)cmlens_model_method_allocator_used(),
         (unsigned)CMLENS_METHOD_ALLOCATOR_POOL_SIZE);
  return 0;
}
"""

CMAKELISTS = """cmake_minimum_required(VERSION 3.21)
project(user_app C CXX)
include({kernels}/cmake/cmlens_board.cmake)   # startup, UART, linker script: stands in for the user's HAL
add_subdirectory(model cmlens_model)
cmlens_add_firmware(app SOURCES main.c)
target_link_libraries(app PRIVATE cmlens_model)
"""


def _lowered(cpu: str) -> bytes:
    """The .bpte of the same cached lowering the export used: its test input and expected outputs."""
    from backend_core.orchestration.jobs import Job, LowerRequest, execute_job

    res = execute_job(Job("ds_cnn", LowerRequest(target=cpu), steps=("lower",), keep=("bpte",)))
    res.raise_error()
    return res.lowering.blobs["model.bpte"]


def _installed_libraries(cpu: str) -> Path:
    from backend_core.target.build.libraries import EtLibRequest, ensure_libraries

    return ensure_libraries(EtLibRequest(Path(ET_ROOT), cpu, "Release", Path(CMSIS_NN))).install_dir


def _build_and_run(project: Path, board, install: Path, extra: list[str] = ()) -> str:
    from backend_core.target.build.libraries import codegen_python
    from backend_core.target.build.paths import KERNELS_DIR
    from backend_core.target.simulate.simulator import runner_for

    build = project / "build"
    flags = " ".join(board.gcc_flags)
    subprocess.run(["cmake", "-G", "Ninja", "-S", str(project), "-B", str(build),
                    f"-DCMAKE_TOOLCHAIN_FILE={KERNELS_DIR}/cmake/arm-none-eabi-gcc.cmake", f"-DCMLENS_BOARD={board.name}",
                    f"-DCMLENS_ET_ROOT={ET_ROOT}", f"-DCMLENS_CMSIS_NN={CMSIS_NN}", f"-DCMLENS_ET_INSTALL_DIR={install}",
                    f"-DCMLENS_PYTHON={codegen_python()}", f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}",
                    *extra], check=True, capture_output=True, text=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True, text=True)   # stdout: the link
    res = runner_for(board).run(build / "app.elf", timeout=60)
    return "\n".join(res.uart)


def _user_project(tmp_path: Path, bundle: Path, bpte: bytes) -> Path:
    from backend_core.target.export.check import _bundled_inputs
    from backend_core.target.build.paths import KERNELS_DIR

    project = tmp_path / "user_project"               # empty, outside the repository
    project.mkdir()
    shutil.copytree(bundle, project / "model")
    (sample,) = _bundled_inputs(bpte)
    (project / "sample.h").write_text("static const unsigned char sample_input_bytes[] __attribute__((aligned(16))) = {"
                                      + ",".join(str(b) for b in sample) + "};\n"
                                      "#define sample_input ((const float*)sample_input_bytes)\n")
    (project / "main.c").write_text(MAIN_C)
    (project / "CMakeLists.txt").write_text(CMAKELISTS.format(kernels=KERNELS_DIR))
    assert len(MAIN_C.strip().splitlines()) <= 20
    return project


@pytest.mark.parametrize("board_flags, cpu", [(["--board", "stm32f746"], "cortex-m7"),
                                              (["--target", "cortex-m55"], "cortex-m55")])
def test_bundle_in_a_users_project_runs_bit_exact(tmp_path: Path, board_flags: list[str], cpu: str) -> None:
    import numpy as np

    from backend_core.common.boards.resolve import resolve_run_board
    from backend_core.target.memory.elf import elf_sizes
    from backend_core.stages.pipeline.reference_check import expected_outputs

    bundle = tmp_path / "bundle"
    assert main(["export", "ds_cnn", *board_flags, "-o", str(bundle), "--et-root", ET_ROOT, "--cmsis-nn", CMSIS_NN,
                 "--quiet"]) == 0
    info = json.loads((bundle / "bundle.json").read_text())
    bpte = _lowered(cpu)
    assert (bundle / "model.pte").read_bytes() in bpte          # the very program the references belong to
    project = _user_project(tmp_path, bundle, bpte)
    board = resolve_run_board(cpu, "qemu", board_flags[1] if board_flags[0] == "--board" else None).board
    uart = _build_and_run(project, board, _installed_libraries(cpu))
    assert "STATUS 0" in uart, uart
    got = np.frombuffer(bytes.fromhex(re.search(r"OUT ([0-9a-f]+)", uart).group(1)), dtype=np.float32)
    (expected,) = expected_outputs(bpte)
    assert got.tobytes() == np.asarray(expected, dtype=np.float32).tobytes()      # bit for bit
    used, pool = map(int, re.search(r"USED (\d+) OF (\d+)", uart).groups())
    assert used <= pool == info["pools"]["method_allocator"]["bytes"] and pool - used < 16
    sizes = elf_sizes(project / "build" / "app.elf")
    assert sizes["flash_code"] + sizes["model_in_image"] <= info["memory"]["flash_bytes"]
    link_map = (project / "build" / "app.map").read_text()
    linked = sum(int(m.group(1), 16) for m in re.finditer(
        r"\.bss\.cmlens_(?:planned_arena_\d+|method_allocator|temp_allocator)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", link_map))
    assert linked == info["pools"]["ram_bytes"]


def test_dropping_any_op_from_the_selective_list_fails_the_link(tmp_path: Path) -> None:
    """Minimal: each of ds_cnn's ops is needed. A list without one fails at the link, naming the op; the
    full list links and runs."""
    from backend_core.common.boards.table import board_for
    from backend_core.target.export.c_sources import op_symbol

    bundle = tmp_path / "bundle"
    assert main(["export", "ds_cnn", "--target", "cortex-m55", "-o", str(bundle), "--et-root", ET_ROOT,
                 "--cmsis-nn", CMSIS_NN, "--quiet"]) == 0
    ops = (bundle / "model_ops.txt").read_text().strip().split(",")
    project = _user_project(tmp_path, bundle, _lowered("cortex-m55"))
    install = _installed_libraries("cortex-m55")
    for op in ops:
        with pytest.raises(subprocess.CalledProcessError) as exc:
            _build_and_run(project, board_for("cortex-m55"), install,
                           [f"-DCMLENS_MODEL_SELECT_OPS_LIST={','.join(o for o in ops if o != op)}"])
        assert f"undefined reference to `{op_symbol(op)}'" in exc.value.stdout, (op, exc.value.stdout[-2000:])
    uart = _build_and_run(project, board_for("cortex-m55"), install, [f"-DCMLENS_MODEL_SELECT_OPS_LIST={','.join(ops)}"])
    assert "STATUS 0" in uart


def test_check_flag_proves_the_bundle(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bundle = tmp_path / "bundle"
    assert main(["export", "ds_cnn", "--target", "cortex-m55", "-o", str(bundle), "--check", "--et-root", ET_ROOT,
                 "--cmsis-nn", CMSIS_NN, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "check: PASS" in out and "bit for bit" in out
    check = json.loads((bundle / "bundle.json").read_text())["check"]
    assert check["verdict"] == "PASS" and check["measured"]["pools"] == check["predicted"]["pools"]
    # issue 44, item 8: ds_cnn's random weights give the same output bytes for every input: said, not hidden
    assert check["inputs"] == ["the reference input", "constant", "ramp", "reversed ramp"]
    assert any("barely depends on the input" in w for w in check["warnings"])
    assert "check: PASS (on degenerate outputs: see the warnings)" in out and "warning: " in out
    assert "barely depends on the input" in (bundle / "README.md").read_text()


def test_will_fail_program_is_refused_then_exported_with_keep_going(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The window partition's 6-D transpose aborts on the target (pre-flight "will fail"): refused, nothing
    written; with --keep-going the bundle holds the rewritten program, names the workaround and PASSes."""
    model = str(Path(__file__).resolve().parents[1] / "preflight" / "models" / "window_partition.py")
    bundle = tmp_path / "bundle"
    common = ["--target", "cortex-m55", "-o", str(bundle), "--et-root", ET_ROOT, "--cmsis-nn", CMSIS_NN, "--quiet"]
    assert main(["export", model, *common]) == 2
    assert "will fail" in capsys.readouterr().err and not bundle.exists()
    assert main(["export", model, *common, "--keep-going", "--check"]) == 0
    info = json.loads((bundle / "bundle.json").read_text())
    assert "permute_in_fewer_dims" in info["workarounds"] and info["check"]["verdict"] == "PASS"
    assert "## Not plain ExecuTorch" in (bundle / "README.md").read_text()


def test_check_on_an_mcu_links_into_its_own_regions(tmp_path: Path) -> None:
    """--board stm32f746 --check: the example firmware is linked into the MCU's regions laid out on QEMU's
    M7 board (boards/sized.py), runs bit for bit, and its RAM is within the bundle's figure."""
    bundle = tmp_path / "bundle"
    assert main(["export", "ds_cnn", "--board", "stm32f746", "-o", str(bundle), "--check", "--et-root", ET_ROOT,
                 "--cmsis-nn", CMSIS_NN, "--quiet"]) == 0
    check = json.loads((bundle / "bundle.json").read_text())["check"]
    assert check["board"].startswith("stm32f746-on-") and check["verdict"] == "PASS"
    assert check["measured"]["ram_static"] <= check["predicted"]["ram"]
    assert check["measured"]["flash"] <= check["predicted"]["flash"]
