"""`cmlens memory` as a CI gate: exit 0 fits, 1 does not fit, 2 bad input; --json has `memory`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main


def test_cmlens_memory_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "m.json"
    assert main(["memory", "ds_cnn", "--board", "stm32f746", "--target", "cortex-m55", "--runtime-from", "table",
                 "--json", str(out)]) == 0
    rep = json.loads(out.read_text())["memory"]
    assert rep["planned_bytes"] == [20464] and rep["verdict"]["fits"] is True
    assert rep["board"]["name"] == "stm32f746" and rep["peak_op"] == "cortex_m_quantized_depthwise_conv2d_default_1"
    text = capsys.readouterr().out
    assert "verdict: FITS" in text and "method allocator pool" in text
    # the whole firmware: the runtime around the model is in the verdict (shipped table: no libraries in CI)
    assert rep["runtime"]["source"] == "table" and rep["runtime"]["code"] > 100_000
    needs = {n["name"]: n for n in rep["verdict"]["needs"]}
    assert {"runtime code + read-only data", "runtime .data + .bss", "stack", "heap"} <= set(needs)
    assert "[from the shipped table, measured on a reference build]" in text
    assert main(["memory", "ds_cnn", "--ram", "24K", "--flash", "1M"]) == 1          # from the cache now
    assert "DOES NOT FIT" in capsys.readouterr().out


@pytest.mark.parametrize("argv,text", [
    (["--board", "stm32f999"], "Unknown board 'stm32f999'"),
    (["--ram=-5K"], "must not be negative"),
    (["--ram", "12Q"], "Cannot read the RAM size"),
    (["--flash", "1M"], "--flash without --ram"),
    (["--board", "rp2350", "--ram", "1M"], "--board and --ram/--flash both given")])
def test_cmlens_memory_bad_input_exits_2_before_lowering(argv: list[str], text: str,
                                                        capsys: pytest.CaptureFixture) -> None:
    assert main(["memory", "ds_cnn", *argv]) == 2
    assert text in capsys.readouterr().err


def test_the_board_picks_the_target_core(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """stm32f746 is a Cortex-M7: without --target the model is lowered for it (CMSIS-NN's DSP kernels
    need other scratch than M55's MVE ones), and the verdict is for that firmware."""
    out = tmp_path / "m7.json"
    assert main(["memory", "ds_cnn", "--board", "stm32f746", "--runtime-from", "table", "--json", str(out)]) == 0
    rep = json.loads(out.read_text())["memory"]
    assert rep["target"] == "cortex-m7" and capsys.readouterr().out.startswith("ds_cnn on cortex-m7")


def test_board_list(capsys: pytest.CaptureFixture) -> None:
    assert main(["memory", "ds_cnn", "--board", "list"]) == 0
    out = capsys.readouterr().out
    assert "stm32h743" in out and "mps3-an547" in out and "source:" in out
