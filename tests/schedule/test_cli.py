"""`cmlens memory --schedule`: bad input is exit 2 with the cause, before the lowering where it can be."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from tests.schedule.conftest import PATCH_NET


@pytest.mark.parametrize("argv,text", [
    (["--schedule", "fit:stm32f999"], "Unknown board 'stm32f999'"),
    (["--schedule", "no/such/schedule.json"], "no such file, and not auto or fit:BOARD"),
    (["--input-dtype", "int8"], "--input-dtype without --schedule"),
])
def test_bad_schedule_flags_exit_2_before_lowering(argv: list[str], text: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["memory", "ds_cnn", *argv]) == 2
    err = capsys.readouterr().err
    assert text in err and "Traceback" not in err


def test_a_file_that_is_not_a_schedule_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps({"memory": {}}))
    assert main(["memory", "ds_cnn", "--schedule", str(bad)]) == 2
    assert "is not a schedule" in capsys.readouterr().err
    bad.write_text("{not json")
    assert main(["memory", "ds_cnn", "--schedule", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_a_schedule_for_another_program_and_a_model_without_conv_prefix_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    other = tmp_path / "other.schedule.json"
    other.write_text(json.dumps({"kind": "cmlens-schedule", "schema": 1, "model": "mv2", "target": "cortex-m55",
                                 "program_key": "0" * 64, "split": "cortex_m_quantized_conv2d_default_7",
                                 "grid": [4, 4], "input": {"dtype": "float32"}, "planner": "greedy"}))
    assert main(["memory", PATCH_NET, "--target", "cortex-m55", "--runtime-from", "table",
                 "--schedule", str(other)]) == 2
    err = capsys.readouterr().err
    assert "was made for another program (mv2 on cortex-m55" in err and "Traceback" not in err
    assert not list(tmp_path.glob("*-cortex-m55.schedule.json"))        # nothing half-done written
    assert main(["memory", "layernorm_mlp", "--target", "cortex-m55", "--runtime-from", "table",
                 "--schedule", "auto"]) == 2
    assert "is not a 4-D image tensor" in capsys.readouterr().err
