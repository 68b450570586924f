"""`cmlens lower` prints the pre-flight's findings on screen, with --json too (issue 46: MONAI's DenseNet had
23 "will fail" findings in the JSON and nothing on stdout)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

DIV = str(Path(__file__).resolve().parents[1] / "preflight" / "models" / "float_operand_mul.py") + ":div"


def test_lower_with_json_prints_the_findings_the_json_holds(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from app.cli import main

    out = tmp_path / "r.json"
    assert main(["lower", DIV, "--calib", "2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    report = json.loads(out.read_text())
    findings = report["preflight"]
    assert findings and any(f["certainty"] == "will fail" for f in findings)
    assert f"pre-flight: {sum(f['certainty'] == 'will fail' for f in findings)} will fail" in text
    assert "WILL FAIL  [cmsis-needs-int8]" in text
