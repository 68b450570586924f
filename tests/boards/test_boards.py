"""CPU target -> board and compiler flags, and the errors for CPUs without a board."""
from __future__ import annotations

import json

import pytest

from backend_core.common.errors import BadInputError
from backend_core.common.boards.table import BOARDS, GCC_FLAGS, board_for, gcc_flags, supported_targets
from backend_core.target.build.paths import KERNELS_DIR
from backend_core.common.errors import UnsupportedTargetError
from backend_core.common.cpus import TARGETS


@pytest.mark.parametrize("target, board", [
    ("cortex-m55", "mps3-an547"), ("M4", "mps2-an386"), ("m7", "mps2-an500"), ("cortex-m33", "mps2-an505"),
    ("cortex-m3", "mps2-an385")])
def test_qemu_board_for_cpu(target: str, board: str) -> None:
    b = board_for(target, "qemu")
    assert b.name == board and b.machine == board and b.simulator == "qemu"


def test_fvp_boards() -> None:
    assert board_for("cortex-m55", "fvp").machine == "FVP_Corstone_SSE-300_Ethos-U55"
    assert board_for("cortex-m85", "fvp").machine == "FVP_Corstone_SSE-320"


def test_cpu_without_qemu_board_says_what_to_do() -> None:
    with pytest.raises(UnsupportedTargetError) as exc:
        board_for("cortex-m85", "qemu")
    assert exc.value.exit_code == 2
    assert "QEMU has no board with a cortex-m85 CPU" in exc.value.message
    assert "--sim fvp" in exc.value.hint and "cortex-m55" in exc.value.hint
    with pytest.raises(UnsupportedTargetError) as exc:
        board_for("cortex-m0plus")
    assert "cortex-m0plus" in exc.value.message and "--sim fvp" not in exc.value.hint
    with pytest.raises(UnsupportedTargetError):
        board_for("cortex-m4", "fvp")
    with pytest.raises(BadInputError):
        board_for("cortex-a53")


def test_gcc_flags_for_all_ten_cpus() -> None:
    assert set(GCC_FLAGS) == set(TARGETS) and len(TARGETS) == 10
    assert gcc_flags("M55") == ("-mcpu=cortex-m55", "-mfloat-abi=hard", "-mthumb")
    assert gcc_flags("cortex-m0") == ("-mcpu=cortex-m0", "-mfloat-abi=soft", "-mthumb")
    assert "-mfpu=fpv5-d16" in gcc_flags("cortex-m7")  # double-precision FPU on M7


def test_supported_targets() -> None:
    assert supported_targets("qemu") == ["cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"]
    assert supported_targets("fvp") == ["cortex-m55", "cortex-m85"]


def test_board_files_exist() -> None:
    """One table: CMake reads kernels/boards.json (no if-chain of its own), one board source for all."""
    text = (KERNELS_DIR / "cmake" / "boards.cmake").read_text()
    rows = json.loads((KERNELS_DIR / "boards.json").read_text())["boards"]
    assert [r["name"] for r in rows] == list(BOARDS)
    assert "string(JSON" in text and "boards.json" in text and "STREQUAL \"mps" not in text
    assert sorted(p.name for p in (KERNELS_DIR / "board").iterdir()) == ["board.c"]
    for b in BOARDS.values():
        assert (KERNELS_DIR / b.linker_script).is_file(), b.linker_script
        assert b.reference and b.memory and {a for a, _ in b.sections} == {"VECTORS", "CODE", "DATA", "BIG"}


def test_memory_map_and_clocks_from_the_table() -> None:
    m55, m4 = board_for("cortex-m55"), board_for("cortex-m4")
    assert m55.region("DATA").name == "DTCM" and m55.region("DATA").length == 512 * 1024
    assert m55.region("CODE").origin == 0x70000000 and m55.uart_base == 0x49303000
    assert m4.region("BIG").name == "PSRAM" and m4.region("BIG").length == 16 * 1024 * 1024
    assert dict(m4.runner_pools) == {"METHOD_ALLOCATOR": 0x600000, "SEMIHOSTING_FILE_ALLOCATOR": 0x400000}
    assert m55.runner_pools == ()
    # -icount shift: one instruction (2**N ns) is at least one SysTick period, so ticks convert back exactly.
    for b in BOARDS.values():
        if b.simulator == "qemu":
            assert 2 ** b.icount_shift >= 1e9 / b.cpu_clock_hz, b.name
            assert 2 ** (b.icount_shift - 1) < 1e9 / b.cpu_clock_hz, b.name  # the smallest such N
        else:
            assert b.icount_shift is None
