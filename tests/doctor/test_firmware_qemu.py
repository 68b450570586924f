"""Cross-compile the kernels/ firmware and run it on QEMU: PASS lines and exit status, FAIL reporting,
the time limit on a hung firmware, the fault report of a crashing one, cancellation."""
from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from backend_core.common.boards.table import board_for
from backend_core.common.errors import Cancelled
from backend_core.target.doctor.selftest import run_selftest
from backend_core.target.simulate.simulator import QemuRunner

from tests.helpers.firmware import QEMU_TARGETS
from backend_core.target.judge.outcome import simulated_outcome

EXPECTED_FEATURES = {"cortex-m55": "fpu dsp mve", "cortex-m4": "fpu dsp", "cortex-m7": "fpu dsp",
                     "cortex-m33": "fpu dsp"}


def _run(firmware, target: str, fw: str, timeout: float = 20.0, **kw):
    build = firmware(target)
    runner = QemuRunner(board_for(target), **kw)
    return runner.run(build.elfs[fw], timeout=timeout)


@pytest.mark.parametrize("target", QEMU_TARGETS)
def test_selftest_passes_on_qemu(firmware, target: str) -> None:
    result = _run(firmware, target, "cmlens_selftest")
    assert result.exit_code == 0, result.uart
    assert simulated_outcome(result) == "PASS"
    tests = result.report.tests
    assert [t.index for t in tests] == list(range(6))
    assert all(t.suite == "selftest" and t.passed for t in tests)
    assert f"features: {EXPECTED_FEATURES[target]}" in result.uart[0]
    # the firmware's last line; the board layer's stack/heap marks (CMLENS MEMORY) follow it at exit
    assert [line for line in result.uart if line and not line.startswith("CMLENS MEMORY:")][-1] == "selftest: 6/6 passed"
    assert result.report.memory.board is not None and result.report.memory.board.heap_refused == 0
    # QEMU does not model the DWT: the firmware must say so rather than print a bogus count.
    assert result.report.cycles is not None and not result.report.cycles.available
    assert "not modelled" in result.report.cycles.reason
    assert result.elapsed_s < 5


def test_selftest_uses_mve_on_m55_only(firmware) -> None:
    m55 = _run(firmware, "cortex-m55", "cmlens_selftest").uart
    m4 = _run(firmware, "cortex-m4", "cmlens_selftest").uart
    assert any("MVE VMLADAV 21531" in line for line in m55)
    assert not any("MVE" in line for line in m4)
    assert any("QADD8" in line for line in m4)  # DSP extension path


@pytest.mark.parametrize("target", ("cortex-m55", "cortex-m4"))
def test_injected_failure_reports_fail_and_exit_1(firmware, target: str) -> None:
    result = _run(firmware, target, "cmlens_selftest_fail")
    assert result.exit_code == 1
    assert simulated_outcome(result) == "FAIL"
    assert [t.passed for t in result.report.tests] == [False, True, True, True, True, True]
    assert "selftest index[0] requantize: case 11: got 44 want 45" in result.uart


def test_hung_firmware_is_stopped_by_the_time_limit(firmware) -> None:
    elf = firmware("cortex-m4").elfs["cmlens_hang"]
    start = time.monotonic()
    result = QemuRunner(board_for("cortex-m4")).run(elf, timeout=1.5)
    took = time.monotonic() - start
    assert result.timed_out and simulated_outcome(result) == "TIMEOUT"
    assert result.exit_code is None
    assert result.problem.startswith("timed out after 1.5 s: the last UART line was `cmlens hang: board=mps2-an386 "
                                     "entering an endless loop` when the 1.5 s limit hit")
    assert 1.4 < took < 5.0
    assert result.uart == ["cmlens hang: board=mps2-an386 entering an endless loop"]
    assert not _qemu_running(elf), "QEMU was left running after the time limit"


def _qemu_running(elf: Path) -> bool:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if str(elf).encode() in cmd and b"qemu" in cmd:
                return True
    return False


@pytest.mark.parametrize("target", ("cortex-m55", "cortex-m7"))
def test_bus_fault_is_reported_with_registers(firmware, target: str) -> None:
    elf = firmware(target).elfs["cmlens_fault"]
    result = QemuRunner(board_for(target)).run(elf, timeout=20)
    assert result.exit_code == 105  # 100 + BusFault exception number
    assert simulated_outcome(result) == "FAULT"
    fault = result.report.faults[0]
    assert fault.kind == "BusFault" and fault.source == "cmlens"
    assert fault.registers["cfsr"] == 0x8200 and fault.registers["bfar"] == 0xF0000000
    assert fault.flags == ["PRECISERR", "BFARVALID"]
    assert fault.address == 0xF0000000
    assert "precise bus error" in result.problem
    # The stacked PC points into main(), where the bad load is.
    func = subprocess.run(["arm-none-eabi-addr2line", "-f", "-e", str(elf), hex(fault.registers["pc"])],
                          capture_output=True, text=True, check=True).stdout.splitlines()[0]
    assert func == "main"


def test_undefined_instruction_is_a_usage_fault(firmware) -> None:
    result = _run(firmware, "cortex-m33", "cmlens_fault_udf")
    assert result.exit_code == 106
    fault = result.report.faults[0]
    assert fault.kind == "UsageFault" and fault.flags == ["UNDEFINSTR"]
    assert fault.address is None


def test_cancel_stops_a_running_simulator(firmware) -> None:
    elf = firmware("cortex-m55").elfs["cmlens_hang"]
    runner = QemuRunner(board_for("cortex-m55"))
    seen = threading.Event()
    runner.on_line = lambda stream, line: seen.set()
    threading.Thread(target=lambda: (seen.wait(10), runner.cancel()), daemon=True).start()
    start = time.monotonic()
    with pytest.raises(Cancelled):
        runner.run(elf, timeout=60)
    assert time.monotonic() - start < 10
    assert not _qemu_running(elf)


def test_uart_lines_stream_before_the_run_ends(firmware) -> None:
    """A GUI console sees lines while the firmware still runs (here: a hung one)."""
    elf = firmware("cortex-m4").elfs["cmlens_hang"]
    stamps: list[float] = []
    runner = QemuRunner(board_for("cortex-m4"), on_line=lambda s, line: stamps.append(time.monotonic()))
    start = time.monotonic()
    runner.run(elf, timeout=2.0)
    assert stamps and stamps[0] - start < 1.5


def test_run_selftest_api_end_to_end(firmware, build_root: Path) -> None:
    firmware("cortex-m55")  # reuse the session build: run_selftest rebuilds incrementally
    events = []
    result = run_selftest("M55", "qemu", timeout=20, build_root=build_root, on_event=events.append)
    assert result.passed and result.outcome == "PASS"
    assert result.board.name == "mps3-an547" and result.target == "cortex-m55"
    assert len(result.tests) == 6
    assert sum(e.kind == "test" for e in events) == 6
    assert "selftest on mps3-an547 (cortex-m55, qemu): PASS - 6/6 tests passed, exit status 0" in result.summary()


def test_build_timings_and_flags_agree_with_boards_py(firmware, build_timings) -> None:
    for target in QEMU_TARGETS:
        build = firmware(target)
        assert build.cpu_flags == list(board_for(target).gcc_flags), target
    for name, secs in build_timings.items():
        print(f"cold build of all firmware variants for {name}: {secs:.2f} s")
        assert secs < 60


@pytest.mark.parametrize("target", ("cortex-m55", "cortex-m85"))
def test_fvp_boards_build_but_are_not_run_no_fvp_here(firmware, target: str) -> None:
    build = firmware(target, "fvp")
    assert build.cpu_flags == list(board_for(target, "fvp").gcc_flags)
    for fw, elf in build.elfs.items():
        assert elf.stat().st_size > 1000, fw
