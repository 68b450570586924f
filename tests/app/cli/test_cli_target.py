"""`cmlens selftest` / `cmlens doctor` through argparse, as app/cli.py wires them: exit status and output."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from app.cli import build_parser


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    parser = build_parser()
    args = parser.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    func = args.func
    code = func(args, out=out, err=err) if argv[0] == "selftest" else func(args, out=out)
    return code, out.getvalue(), err.getvalue()


def test_selftest_pass_exit_0(firmware, build_root: Path) -> None:
    firmware("cortex-m4")
    code, out, _ = run_cli(["selftest", "--sim", "qemu", "--target", "cortex-m4", "--build-dir", str(build_root)])
    assert code == 0
    assert "cmlens: self-test 'selftest' for cortex-m4 on mps2-an386 (qemu), time limit 30 s" in out
    assert "uart> TEST: selftest index[5] Test_result: PASS" in out
    assert "selftest on mps2-an386 (cortex-m4, qemu): PASS - 6/6 tests passed, exit status 0" in out


def test_selftest_fail_exit_1(firmware, build_root: Path) -> None:
    firmware("cortex-m55")
    code, out, _ = run_cli(["selftest", "--firmware", "selftest-fail", "--build-dir", str(build_root), "--quiet"])
    assert code == 1
    assert "FAIL - 5/6 tests passed, exit status 1" in out
    assert "  | " not in out  # --quiet: no build output


def test_selftest_fault_and_hang_exit_3(firmware, build_root: Path) -> None:
    firmware("cortex-m7")
    code, out, _ = run_cli(["selftest", "--target", "m7", "--firmware", "fault", "--build-dir", str(build_root)])
    assert code == 3
    assert "problem: the firmware faulted: BusFault" in out
    assert "fault registers: cfsr=0x00008200 hfsr=0x00000000 mmfar=0x00000000 bfar=0xf0000000" in out
    code, out, _ = run_cli(["selftest", "--target", "m7", "--firmware", "hang", "--timeout", "1",
                            "--build-dir", str(build_root)])
    assert code == 3
    assert "problem: timed out after 1 s: the last UART line was `cmlens hang: board=" in out


def test_selftest_bad_target_exit_2() -> None:
    code, _, err = run_cli(["selftest", "--target", "cortex-m85"])
    assert code == 2
    assert "QEMU has no board with a cortex-m85 CPU" in err and "--sim fvp" in err
    code, _, err = run_cli(["selftest", "--target", "cortex-x1"])
    assert code == 2 and "Unknown target" in err


def test_selftest_missing_tools_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code, _, err = run_cli(["selftest", "--build-dir", str(tmp_path)])
    assert code == 2
    assert "qemu-system-arm was not found" in err and "apt-get install -y qemu-system-arm" in err
    code, _, err = run_cli(["selftest", "--sim", "fvp"])
    assert code == 2 and "developer.arm.com" in err


def test_doctor_command_registered(toolchain) -> None:
    code, out, _ = run_cli(["doctor", "--json"])
    assert code == 0 and '"ok": true' in out
