"""Opt-in, real: `cmlens run layernorm_mlp --board stm32l4r5 --profile --json F --html F` on QEMU M4 writes the
estimate into both faces: the JSON's profile has ms on every op row and island, the estimate its headline,
the values used and the sources of error; the HTML report has the headline on top and a per-op / per-island
table with ≈ ms. Needs CMLENS_TEST_ET_ROOT (and cached M4 libraries to be quick)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.cli import main


@pytest.mark.slow
def test_run_profile_json_and_html_carry_the_milliseconds(tmp_path: Path, capsys) -> None:
    root = os.environ.get("CMLENS_TEST_ET_ROOT")
    if not root or not Path(root).is_dir():
        pytest.skip("opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")
    pytest.importorskip("executorch")
    argv = ["run", "layernorm_mlp", "--board", "stm32l4r5", "--profile", "--quiet", "--et-root", root,
            "--json", str(tmp_path / "run.json"), "--html", str(tmp_path / "run.html")]
    if os.environ.get("CMLENS_TEST_CMSIS_NN"):
        argv += ["--cmsis-nn", os.environ["CMLENS_TEST_CMSIS_NN"]]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    prof = json.loads((tmp_path / "run.json").read_text())["profile"]
    e = prof["estimate"]
    assert e["board"] == "stm32l4r5" and e["clock_mhz"] == 120 and e["headline"] in out
    assert all(o["ms"] is not None for o in prof["ops"]) and sum(o["ms"] for o in prof["ops"]) == pytest.approx(e["ms"])
    assert [i["name"] for i in prof["islands"]][0] == "aten.native_layer_norm island" and prof["islands"][0]["ms"] > 0
    assert "clock 120 MHz (board table)" in e["used"] and any("bus contention" in s for s in e["sources_of_error"])
    page = (tmp_path / "run.html").read_text()
    assert "Run on stm32l4r5-on-mps2-an386 (qemu)" in page and "Cycle estimate (kernels): ≈ " in page
    assert "<th>≈ ms</th>" in page and f"<td>{prof['islands'][0]['ms']:.3f}</td>" in page
    assert f"wrote html: {tmp_path / 'run.html'}" in out
