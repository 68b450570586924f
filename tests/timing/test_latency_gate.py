"""`cmlens gate --max-latency-ms`: a pull request that adds a LayerNorm fallback to a keyword spotter on an
M4 (stm32l4r5) fails, naming the LayerNorm island that grew; the model before it passes; a result without
a cycle estimate and a garbled limit are exit 2; `compare` shows the estimated ms beside instructions.

The lowerings are real (the pip ExecuTorch). The profiles are the `profile` sections of real
`cmlens run tests/fixtures/models/kws_pr/{before,after}/kws.py --board stm32l4r5 --profile --json F` runs on
QEMU mps2-an386 with an ExecuTorch checkout (recorded: CI has no checkout, so a run is the boundary)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main

HERE = Path(__file__).parent
KWS = HERE.parents[0] / "fixtures" / "models" / "kws_pr"
BEFORE, AFTER = KWS / "before" / "kws.py", KWS / "after" / "kws.py"
RUN_BEFORE = HERE / "fixtures" / "run_profile_kws_before_stm32l4r5.json"
RUN_AFTER = HERE / "fixtures" / "run_profile_kws_after_stm32l4r5.json"


def _ms(run: Path) -> float:
    return json.loads(run.read_text())["profile"]["estimate"]["ms"]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("executorch")
    path = tmp_path_factory.mktemp("latency") / "kws-m4.json"
    assert main(["gate", f"{BEFORE}@profile={RUN_BEFORE}", "--target", "m4", "--write-baseline", str(path)]) == 0
    return path


def test_recorded_runs_hold_the_estimate_of_the_layer_norm_island() -> None:
    before, after = (json.loads(p.read_text())["profile"] for p in (RUN_BEFORE, RUN_AFTER))
    assert before["estimate"]["board"] == after["estimate"]["board"] == "stm32l4r5"
    assert not before["islands"] and [i["name"] for i in after["islands"]] == ["aten.native_layer_norm island"]
    assert after["islands"][0]["ms"] > 0 and _ms(RUN_AFTER) > _ms(RUN_BEFORE)


def test_a_layer_norm_fallback_over_the_limit_fails_naming_its_island(baseline: Path, capsys) -> None:
    limit = (_ms(RUN_BEFORE) + _ms(RUN_AFTER)) / 2            # the model before fits, the PR does not
    code = main(["gate", f"{AFTER}@profile={RUN_AFTER}", "--target", "m4", "--baseline", str(baseline),
                 "--max-latency-ms", f"{limit:.4f}"])
    out = capsys.readouterr().out
    assert code == 1, out
    line = next(x for x in out.splitlines() if "estimated latency" in x)
    assert line.lstrip().startswith("FAIL") and "stm32l4r5 @ 120 MHz" in line and "±" in line
    assert f"{_ms(RUN_BEFORE):.3f} ms -> {_ms(RUN_AFTER):.3f} ms" in line
    grew = [x.strip() for x in out.splitlines() if "grew against the baseline" in x]
    assert grew[0].startswith("grew against the baseline: island aten.native_layer_norm island: new")
    assert any("aten.layer_norm `layer_norm` [norm]" in x for x in grew)


def test_the_model_before_the_pull_request_passes_the_same_limit(baseline: Path, capsys) -> None:
    limit = (_ms(RUN_BEFORE) + _ms(RUN_AFTER)) / 2
    code = main(["gate", f"{BEFORE}@profile={RUN_BEFORE}", "--target", "m4", "--baseline", str(baseline),
                 "--max-latency-ms", f"{limit:.4f}ms"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ok    estimated latency" in out


def test_no_estimate_or_a_garbled_limit_is_exit_2(baseline: Path, tmp_path: Path, capsys) -> None:
    run = json.loads(RUN_AFTER.read_text())
    run["profile"]["estimate"] = None
    for o in run["profile"]["ops"]:
        o.pop("ms", None)
    bare = tmp_path / "no-estimate.json"
    bare.write_text(json.dumps(run))
    assert main(["gate", f"{AFTER}@profile={bare}", "--target", "m4", "--baseline", str(baseline),
                 "--max-latency-ms", "20"]) == 2
    assert "has no cycle estimate" in capsys.readouterr().err
    assert main(["gate", str(AFTER), "--target", "m4", "--baseline", str(baseline), "--max-latency-ms", "fast"]) == 2
    assert "is not a latency" in capsys.readouterr().err


def test_compare_shows_the_estimated_ms_and_the_islands_ms(tmp_path: Path, capsys) -> None:
    pytest.importorskip("executorch")
    page = tmp_path / "compare.html"
    assert main(["compare", f"{BEFORE}@profile={RUN_BEFORE}", f"{AFTER}@profile={RUN_AFTER}", "--target", "m4",
                 "--html", str(page)]) == 0
    out = capsys.readouterr().out
    html = page.read_text()
    assert "estimated ms (kernels, stm32l4r5 @ 120 MHz)" in html and f"{_ms(RUN_AFTER):,.3f} ms" in html
    assert "estimated ms (kernels, stm32l4r5 @ 120 MHz, ±" in out
    assert f"{_ms(RUN_BEFORE):.3f} -> {_ms(RUN_AFTER):.3f}" in out
    assert "island aten.native_layer_norm island:" in out and "; ≈ - -> 0.052 ms" in out


def test_history_records_the_estimated_ms_as_a_metric() -> None:
    pytest.importorskip("executorch")
    from backend_core.orchestration.compare.sides import load_side, parse_side
    from backend_core.orchestration.history.metrics import label, metrics_of

    before = load_side(parse_side(f"{BEFORE}@profile={RUN_BEFORE}", {"target": "cortex-m4"}), "before")
    after = load_side(parse_side(f"{AFTER}@profile={RUN_AFTER}", {"target": "cortex-m4"}), "after")
    (mb, _), (ma, notes) = metrics_of(before.report, before.facts), metrics_of(after.report, after.facts)
    assert mb["estimated_ms"] == round(_ms(RUN_BEFORE), 4) and ma["estimated_ms"] == round(_ms(RUN_AFTER), 4)
    assert ma["estimated_ms"] > mb["estimated_ms"] and notes["estimate"]["board"] == "stm32l4r5"
    assert "ms" in label("estimated_ms")


def test_a_fixed_latency_limit_needs_no_baseline(capsys) -> None:
    pytest.importorskip("executorch")
    over = main(["gate", f"{AFTER}@profile={RUN_AFTER}", "--target", "m4", "--max-latency-ms", "20"])
    out = capsys.readouterr().out
    assert over == 1 and "(no baseline)" in out and "FAIL  estimated latency" in out
    assert "costliest: aten.conv2d `conv2d` [conv]" in out                  # the biggest kernel named
    assert main(["gate", f"{AFTER}@profile={RUN_AFTER}", "--target", "m4", "--max-latency-ms", "25"]) == 0
    assert "ok    estimated latency" in capsys.readouterr().out
    assert main(["gate", str(AFTER), "--target", "m4", "--max-latency-ms", "25", "--no-new-fallbacks"]) == 2
    assert "gate needs --baseline" in capsys.readouterr().err          # a relative check still needs one
