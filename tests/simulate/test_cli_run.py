"""`cmlens run` up to the point where ExecuTorch sources would be needed: bad input gives exit 2 and
a message that says what to pass; the op check stops a model the checkout cannot run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.checkouts import fake_checkout, fake_cmsis_nn
from tests.helpers.cli import run_cli
from tests.helpers.programs import CORTEX_M_YAML, make_pte


def test_run_without_checkout_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    code, out, err = run_cli(["run", "ds_cnn", "--sim", "qemu", "--target", "cortex-m55"])
    assert code == 2
    assert "error: no ExecuTorch checkout: pass --et-root PATH (or set EXECUTORCH_ROOT)." in err
    assert "git clone https://github.com/pytorch/executorch" in err and "--cmsis-nn PATH" in err
    assert out == ""


def test_run_with_bad_checkout_paths_exit_2(tmp_path: Path) -> None:
    code, _, err = run_cli(["run", "ds_cnn", "--et-root", str(tmp_path / "nope")])
    assert code == 2
    assert f"error: ExecuTorch checkout {tmp_path / 'nope'} (--et-root) does not exist." in err
    code, _, err = run_cli(["run", "ds_cnn", "--et-root", str(tmp_path)])
    assert code == 2
    assert "is not an ExecuTorch checkout: examples/arm/executor_runner/arm_executor_runner.cpp is missing" in err


def test_run_with_bad_cmsis_nn_or_target_exit_2(tmp_path: Path) -> None:
    root = fake_checkout(tmp_path)
    code, _, err = run_cli(["run", "ds_cnn", "--et-root", str(root), "--cmsis-nn", str(tmp_path)])
    assert code == 2 and "is not CMSIS-NN: Include/arm_nnfunctions.h is missing" in err
    code, _, err = run_cli(["run", "ds_cnn", "--et-root", str(root), "--target", "cortex-m85"])
    assert code == 2 and "QEMU has no board with a cortex-m85 CPU" in err


def test_run_missing_model_file_exit_2(toolchain, tmp_path: Path) -> None:
    root = fake_checkout(tmp_path)
    code, _, err = run_cli(["run", str(tmp_path / "absent.bpte"), "--et-root", str(root),
                            "--cmsis-nn", str(fake_cmsis_nn(tmp_path))])
    assert code == 2 and f"Model file {tmp_path / 'absent.bpte'} does not exist." in err


def test_run_stops_on_ops_the_checkout_lacks_exit_2(toolchain, tmp_path: Path) -> None:
    root = fake_checkout(tmp_path)
    (root / "backends/cortex_m/ops").mkdir(parents=True)
    (root / "backends/cortex_m/ops/operators.yaml").write_text(CORTEX_M_YAML.read_text())
    model = tmp_path / "ds_cnn_explicit.pte"
    model.write_bytes(make_pte([[("cortex_m::quantize_per_tensor", "out"),
                                 ("cortex_m::quantized_conv2d_nhwc", "out")]]))
    code, out, err = run_cli(["run", str(model), "--et-root", str(root), "--cache-dir", str(tmp_path / "c"),
                              "--cmsis-nn", str(fake_cmsis_nn(tmp_path))])
    assert code == 2
    assert "cmlens: ops: 1 of 2 operators of the model have no kernel in the checkout: " \
           "cortex_m::quantized_conv2d_nhwc.out" in out
    assert "error: 1 of 2 operators" in err and "--flow legacy" in err
    assert not (tmp_path / "c" / "executorch").exists() and not (tmp_path / "c" / "runner").exists()   # no build


def test_run_missing_qemu_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_checkout(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = run_cli(["run", "ds_cnn", "--et-root", str(root)])
    assert code == 2
    assert "qemu-system-arm was not found" in err and "apt-get install" in err


def fake_toolchain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, elf: Path) -> None:
    """A `cmake` that 'builds' the ExecuTorch libraries (writes the install marker) and the runner (copies
    a real kernels/ firmware into place), so `cmlens run` goes through every step on real QEMU."""
    import os

    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    (bindir / "cmake").write_text(f"""#!/bin/sh
echo "fake cmake $*"
if [ "$1" = "--build" ]; then
  case "$*" in
    *"--target install"*) mkdir -p "$(dirname "$2")/install/lib/cmake/ExecuTorch" &&
                          touch "$(dirname "$2")/install/lib/cmake/ExecuTorch/executorch-config.cmake" ;;
    *arm_executor_runner*) cp "{elf}" "$2/arm_executor_runner.elf" ;;
  esac
fi
""")
    (bindir / "cmake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.parametrize("variant,code,outcome", [("cmlens_selftest", 0, "PASS"),
                                                  ("cmlens_selftest_fail", 1, "FAIL"),
                                                  ("cmlens_fault", 3, "FAULT")])
def test_run_end_to_end_with_a_stand_in_runner(firmware, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               variant: str, code: int, outcome: str) -> None:
    build = firmware("cortex-m55")
    root = fake_checkout(tmp_path)
    (root / "backends/cortex_m/ops").mkdir(parents=True)
    (root / "backends/cortex_m/ops/operators.yaml").write_text(CORTEX_M_YAML.read_text())
    model = tmp_path / "m.bpte"
    from tests.helpers.programs import make_bpte

    model.write_bytes(make_bpte(make_pte([[("cortex_m::quantized_linear", "out")]])))
    fake_toolchain(tmp_path, monkeypatch, build.elfs[variant])
    code_, out, err = run_cli(["run", str(model), "--et-root", str(root), "--cache-dir", str(tmp_path / "cache"),
                               "--timeout", "20", "--json", "--cmsis-nn", str(fake_cmsis_nn(tmp_path)),
                               "--protocol"])
    assert code_ == code, out + err
    assert "cmlens: ops: all 1 operators of the model have kernels in the checkout (1 cortex_m)" in out
    assert "--preset arm-baremetal" in out and "-S " in out and "kernels/runner" in out
    assert "  | fake cmake --build" in out                     # build output streamed
    assert "uart> " in out                                     # UART streamed
    from backend_core.common import protocol

    steps = [m["step"] for m in map(protocol.parse_line, out.splitlines()) if m and m.get("type") == "step"]
    assert steps == ["lower", "check ops", "libraries", "build runner", "run", "results"]   # --protocol
    assert set(steps) <= set(protocol.RUN_STEPS)
    assert f"m on mps3-an547 (cortex-m55, qemu): {outcome}" in out
    assert "cycles: unavailable on qemu (simulator: not cycle-accurate anyway)" in out
    data = json.loads(out[out.index("{\n"):])
    assert data["outcome"] == outcome and data["board"] == "mps3-an547"
    assert data["ops"] == {"model": ["cortex_m::quantized_linear.out"], "missing": []}
    assert set(data["timings_s"]) == {"lower_s", "libraries_s", "runner_configure_s", "runner_build_s", "run_s"}


def test_semihosting_runner_files_and_command(tmp_path: Path) -> None:
    from backend_core.common.boards.table import board_for
    from backend_core.target.simulate.semihosting import semihosting_files
    from backend_core.target.simulate.simulator import QemuRunner

    model = tmp_path / "ds_cnn.bpte"
    model.write_bytes(b"\0\0\0\0BP08")
    argv = semihosting_files(model, tmp_path / "work")
    assert argv == ["executor_runner", "-m", "model.bpte", "-i", "input.bin", "-o", "out"]
    assert (tmp_path / "work" / "model.bpte").read_bytes() == model.read_bytes()
    assert (tmp_path / "work" / "input.bin").stat().st_size == 4
    cmd = QemuRunner(board_for("cortex-m55"), qemu="qemu-system-arm").command("r.elf", argv)
    assert cmd[cmd.index("-semihosting-config") + 1] == (
        "enable=on,target=native,arg=executor_runner,arg=-m,arg=model.bpte,arg=-i,arg=input.bin,arg=-o,arg=out")


def test_semihosting_needs_a_bpte(toolchain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_checkout(tmp_path)
    (root / "backends/cortex_m/ops").mkdir(parents=True)
    (root / "backends/cortex_m/ops/operators.yaml").write_text(CORTEX_M_YAML.read_text())
    model = tmp_path / "m.pte"
    model.write_bytes(make_pte([[("cortex_m::quantized_linear", "out")]]))
    fake_toolchain(tmp_path, monkeypatch, tmp_path / "none.elf")
    code, _, err = run_cli(["run", str(model), "--et-root", str(root), "--semihosting",
                            "--cache-dir", str(tmp_path / "c"), "--cmsis-nn", str(fake_cmsis_nn(tmp_path))])
    assert code == 2 and "The semihosting runner needs a .bpte" in err


def test_run_streams_etdump_base64_lines_abbreviated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`cmlens run --etdump` echoes the UART: the base64 lines (100+ kB each with a real model) are shown
    abbreviated, while the parser, fed by the simulator driver before the echo, gets the full text."""
    import importlib

    from backend_core.common.errors import SimulatorError
    from backend_core.target.simulate.uart import UartParser

    rec = Path(__file__).resolve().parents[1] / "fixtures" / "target" / "uart_etdump_tiny_conv_pass_mps3-an547.txt"
    parser = UartParser()

    def fake_run_model(source, *, on_line=None, **kw):
        for line in rec.read_text().splitlines():       # like simulator.SimRunner: parse, then echo
            parser.feed_line(line)
            on_line("uart", line)
        raise SimulatorError("stand-in run ends here")

    # the job's run step, without a checkout or lowering
    jr = importlib.import_module("backend_core.orchestration.jobs.execute_job")
    monkeypatch.setattr(jr, "_check_run_environment", lambda job, emit: None)
    monkeypatch.setitem(jr._STEPS, "lower", lambda *a: None)
    monkeypatch.setattr(importlib.import_module("backend_core.orchestration.jobs.target_run.run_on_target"), "run_on_target",
                        fake_run_model)
    code, out, err = run_cli(["run", "tiny", "--et-root", str(tmp_path), "--etdump"])
    assert code == 3 and "stand-in run ends here" in err
    assert 'uart> echo "<base64, 732 bytes decoded>" | base64 -d >debug_buffer.bin' in out
    assert 'uart> echo "<base64, 1,984 bytes decoded>" | base64 -d >etdump.bin' in out
    assert max(len(ln) for ln in out.splitlines()) < 200
    assert len(parser.report.etdumps[0].files["debug_buffer.bin"]) == 732
