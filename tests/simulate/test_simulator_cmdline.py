"""Simulator command lines (argument lists) and the FVP driver, which cannot run here: there is no
FVP on this machine, so FVP tests check the command line or use a stand-in script."""
from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from backend_core.common.boards.table import board_for
from backend_core.common.errors import SimulatorError, ToolMissingError
from backend_core.target.simulate.simulator import FvpRunner, QemuRunner
from backend_core.target.judge.outcome import simulated_outcome


def test_qemu_command_line() -> None:
    r = QemuRunner(board_for("cortex-m55"), qemu="/usr/bin/qemu-system-arm")
    assert r.command("/b/fw.elf") == [
        "/usr/bin/qemu-system-arm", "-M", "mps3-an547", "-display", "none", "-monitor", "none",
        "-serial", "stdio", "-semihosting-config", "enable=on,target=native", "-kernel", "/b/fw.elf"]
    argv = r.command("fw.elf", ["executor_runner", "-m", "model.bpte"])
    assert argv[argv.index("-semihosting-config") + 1] == (
        "enable=on,target=native,arg=executor_runner,arg=-m,arg=model.bpte")


def test_qemu_icount_command_line_for_profiling_runs() -> None:
    """-icount shift=N from boards.json: one instruction = 2**N ns >= one SysTick period of the board."""
    m55 = QemuRunner(board_for("cortex-m55"), qemu="qemu-system-arm", icount=True).command("fw.elf")
    assert m55[:5] == ["qemu-system-arm", "-M", "mps3-an547", "-icount", "shift=5"]
    m4 = QemuRunner(board_for("cortex-m4"), qemu="qemu-system-arm", icount=True).command("fw.elf")
    assert m4[3:5] == ["-icount", "shift=6"]  # 25 MHz SysTick: 40 ns per tick, 64 ns per instruction
    assert "-icount" not in QemuRunner(board_for("cortex-m4"), qemu="q").command("fw.elf")


def test_qemu_missing_elf_and_missing_qemu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SimulatorError, match="does not exist"):
        QemuRunner(board_for("cortex-m4"), qemu="/usr/bin/qemu-system-arm").run(tmp_path / "none.elf")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissingError) as exc:
        QemuRunner(board_for("cortex-m4")).run(tmp_path / "none.elf")
    assert "apt-get install -y qemu-system-arm" in exc.value.hint


def _c_params(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "-C"]


def test_fvp_command_line_mocked_no_fvp_here_corstone_300() -> None:
    r = FvpRunner(board_for("cortex-m55", "fvp"), fvp="/fvp/FVP_Corstone_SSE-300_Ethos-U55")
    argv = r.command("/b/runner.elf", timeout=600, cwd="/work/run",
                     cmd_line="executor_runner -m model.bpte -i fvp_dummy_input.bin -o out")
    assert argv[0] == "/fvp/FVP_Corstone_SSE-300_Ethos-U55"
    # The parameters of ExecuTorch's backends/arm/scripts/run_fvp.sh (cortex-m branch), in order.
    assert _c_params(argv) == [
        "ethosu.num_macs=128",
        "mps3_board.visualisation.disable-visualisation=1",
        "mps3_board.telnetterminal0.start_telnet=0",
        "mps3_board.uart0.out_file=-",
        "mps3_board.uart0.shutdown_on_eot=1",
        "cpu0.semihosting-enable=1",
        "cpu0.semihosting-stack_base=0",
        "cpu0.semihosting-heap_limit=0",
        "cpu0.semihosting-cwd=/work/run",
        "ethosu.extra_args=--fast",
        "cpu0.semihosting-cmd_line=executor_runner -m model.bpte -i fvp_dummy_input.bin -o out",
    ]
    assert argv[-4:] == ["-a", "/b/runner.elf", "--timelimit", "600"]


def test_fvp_command_line_mocked_no_fvp_here_corstone_320() -> None:
    argv = FvpRunner(board_for("cortex-m85", "fvp"), fvp="FVP_Corstone_SSE-320").command("fw.elf", timeout=30)
    params = _c_params(argv)
    assert "mps4_board.subsystem.cpu0.semihosting-enable=1" in params
    assert "mps4_board.uart0.out_file=-" in params and "vis_hdlcd.disable_visualisation=1" in params
    assert not any(p.startswith("cpu0.") or p.startswith("mps3_board") for p in params)
    assert argv[-2:] == ["--timelimit", "30"]


def test_fvp_missing_says_where_to_download_no_fvp_here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolMissingError) as exc:
        FvpRunner(board_for("cortex-m55", "fvp")).run("fw.elf")
    assert exc.value.exit_code == 2
    assert "developer.arm.com" in exc.value.hint and "setup.sh --i-agree-to-the-contained-eula" in exc.value.hint


def test_fvp_run_with_stand_in_script_no_fvp_here(tmp_path: Path) -> None:
    """The FVP driver's plumbing (UART on stdout, EOT, FVP's own stop message) with a fake FVP."""
    fake = tmp_path / "FVP_Corstone_SSE-300_Ethos-U55"
    fake.write_text(f"#!{sys.executable}\n"
                    "import sys\n"
                    "assert '-a' in sys.argv and '--timelimit' in sys.argv\n"
                    "print('TEST: BundleIO index[0] Test_result: PASS', flush=True)\n"
                    "print('I [executorch:r.cpp:1 main()] \\x04')\n"
                    "print('Info: /OSCI/SystemC: Simulation stopped by user.')\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"\x7fELF")
    result = FvpRunner(board_for("cortex-m55", "fvp"), fvp=str(fake)).run(elf, timeout=10)
    assert result.exit_code == 0 and simulated_outcome(result) == "PASS" and result.problem == ""
    assert result.report.garbage_chars == 1


def test_fvp_time_limit_message_is_a_timeout_no_fvp_here(tmp_path: Path) -> None:
    fake = tmp_path / "FVP_Corstone_SSE-320"
    fake.write_text(f"#!{sys.executable}\nprint('Info: Simulation is stopping. Reason: CPU time has been exceeded.')\n")
    fake.chmod(0o755)
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"\x7fELF")
    result = FvpRunner(board_for("cortex-m85", "fvp"), fvp=str(fake)).run(elf, timeout=5)
    assert result.timed_out and simulated_outcome(result) == "TIMEOUT"
    assert result.problem.startswith("timed out after 5 s: the last UART line was `Info: Simulation is stopping.")
