"""`cmlens run` stops before the build when the pre-flight is certain the program fails, and `cmlens
check` prints the findings with the documented exit codes and JSON."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.cli import main as cli_main
from backend_core.orchestration.jobs.steps.preflight import PreflightError, gate
from backend_core.stages.pipeline.stages import PipelineOptions

from .test_preflight_rules import GATE, lowered


def test_gate_stops_a_program_that_will_fail(tmp_path: Path) -> None:
    res = lowered(GATE)
    bpte = tmp_path / "m.bpte"
    bpte.write_bytes(res.blobs["model.bpte"])
    lines: list[str] = []
    with pytest.raises(PreflightError) as ei:
        gate(GATE, bpte, PipelineOptions("cortex-m55", "legacy"), "mps3-an547", lambda s, line: lines.append(line),
             lowered=res)
    exc = ei.value
    assert exc.exit_code == 2
    assert "at aten_cat_default (aten.cat.default, layout-ignored, 2 finding(s) of 2 kind(s))" in exc.message
    assert "Nothing was built" in exc.message and "op_softmax" not in exc.message
    assert ".contiguous()" in exc.hint and "--skip-preflight" in exc.hint
    assert any("pre-flight: will fail" in line for line in lines)


def test_check_cli_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out_json = tmp_path / "check.json"
    assert cli_main(["check", GATE, "--json", str(out_json)]) == 1
    text = capsys.readouterr().out
    assert "2 will fail" in text and "op_softmax.cpp:40" in text and "op_cat.cpp:54" in text
    # each finding says which runtime check it models and what its certainty rests on
    assert "check: tensors_have_same_dim_order(...) of the portable kernel" in text
    assert ("certainty: will fail: confirmed by a real failure on QEMU "
            "(tests/fixtures/uart/preflight_softmax_dim_order_mps3-an547.txt)") in text
    assert "· program: instruction 7, kernel aten::_softmax.out" in text
    data = json.loads(out_json.read_text())
    assert [f["rule"] for f in data["preflight"]] == ["layout-ignored", "dim-order-mismatch"]
    assert data["preflight"][0]["certainty"] == "will fail"

    assert cli_main(["check", "layernorm_mlp", "--board", "mps3-an547"]) == 0
    text = capsys.readouterr().out
    assert "pre-flight clean" in text and "memory fit on mps3-an547" in text

    from .test_preflight_rules import MODELS

    assert cli_main(["check", str(MODELS / "conv_transpose.py")]) == 1
    text = capsys.readouterr().out
    assert "0 will fail, 1 may fail" in text and "certainty: may fail (warns, does not stop `cmlens run`)" in text

    assert cli_main(["check", str(tmp_path / "nope.py")]) == 2
    assert "Model file not found" in capsys.readouterr().err
    assert cli_main(["check", "layernorm_mlp", "--board", "no-such-board"]) == 2


@pytest.mark.skipif(not os.environ.get("CMLENS_TEST_ET_ROOT"), reason="opt-in: needs an ExecuTorch checkout "
                    "(CMLENS_TEST_ET_ROOT); CI has none")
def test_run_stops_with_exit_2_before_building(capsys: pytest.CaptureFixture) -> None:
    code = cli_main(["run", GATE, "--sim", "qemu", "--target", "cortex-m55", "--et-root", os.environ["CMLENS_TEST_ET_ROOT"],
                     *(["--cmsis-nn", os.environ["CMLENS_TEST_CMSIS_NN"]] if os.environ.get("CMLENS_TEST_CMSIS_NN") else [])])
    captured = capsys.readouterr()
    assert code == 2, captured.out + captured.err
    text = captured.out + captured.err
    assert "Pre-flight: this program will fail on the target at aten_cat_default" in text
    assert "runner build" not in text and "libraries" not in text.split("Pre-flight")[0].split("ops:")[-1]
