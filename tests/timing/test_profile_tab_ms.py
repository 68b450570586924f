"""The window's Profile tab with a cycle estimate: the headline (≈ ms @ the board's clock, the estimate's
error) under the title, ≈ ms on every op and fallback-island bar, in the inspector and the summary; and
nothing of it for a profile without an estimate. The profile is the recorded `profile` section of a real
`cmlens run layernorm_mlp --board stm32l4r5 --profile --json F` on QEMU (CI has no ExecuTorch checkout to
make one, so the recorded run is the boundary). The same profile's HTML section is checked here too."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

RUN = Path(__file__).parent / "fixtures" / "run_profile_layernorm_mlp_stm32l4r5.json"


@pytest.fixture()
def recorded() -> dict:
    return json.loads(RUN.read_text())["profile"]


def _view(qtbot, profile: dict):
    from app.profile.view import ProfileView

    view = ProfileView()
    qtbot.addWidget(view)
    view.resize(1366, 300)
    view.show()
    qtbot.waitExposed(view)
    view.set_profile(profile)
    return view


def test_recorded_profile_shows_ms_per_island_and_op_with_clock_and_error(qtbot, recorded) -> None:
    e = recorded["estimate"]
    view = _view(qtbot, recorded)
    head = view.estimate.text()
    assert view.estimate.isVisible()
    assert f"≈ {e['ms']:.3g} ms @ 120 MHz on stm32l4r5" in head and f"±{e['error_pct']:.0f} %" in head
    assert "published measurements" in head and "used:" in view.estimate.toolTip()
    assert "bus contention" in view.estimate.toolTip()
    assert view.mode.currentData() == "islands"
    island = next(r for r in view.rows if r["label"].startswith("aten.native_layer_norm island"))
    assert island["ms"] == pytest.approx(recorded["islands"][0]["ms"])
    shown = [t.textItem.toPlainText() for t in view._labels if t.isVisible()]
    assert any("aten.native_layer_norm island" in t and f"≈ {island['ms']:.3f} ms" in t for t in shown), shown
    assert f"≈ {island['ms']:.3f} ms" in view.summary.text()
    view.mode.setCurrentIndex(0)                                    # top ops
    assert all(r["ms"] is not None for r in view.rows)
    ln = next(o for o in recorded["ops"] if o["node"] == "aten_native_layer_norm_default")
    inspector = view.node_html("aten_native_layer_norm_default")
    assert f"≈ {ln['ms']:.3f} ms</b> estimated @ 120 MHz on stm32l4r5" in inspector


def test_a_profile_without_an_estimate_shows_no_ms(qtbot, recorded) -> None:
    recorded["estimate"] = None
    view = _view(qtbot, recorded)
    assert not view.estimate.isVisible() and view.estimate.text() == ""
    assert all(r["ms"] is None for r in view.rows)
    assert "ms" not in view.node_html("aten_native_layer_norm_default").replace("MACs", "")


def test_html_section_of_the_recorded_run(recorded) -> None:
    from backend_core.analyses.report.profile_html import profile_html, run_headline_html

    page = profile_html(recorded)
    assert recorded["estimate"]["headline"].replace("'", "&#x27;") in page
    assert "<th>≈ ms</th>" in page and f"<td>{recorded['islands'][0]['ms']:.3f}</td>" in page
    assert "clock 120 MHz (board table), flash wait states 5" in page and "known sources of error" in page
    top = run_headline_html({"board": "stm32l4r5-on-mps2-an386", "simulator": "qemu", "outcome": "PASS",
                             "profile": recorded})
    assert "PASS" in top and "Cycle estimate (kernels): ≈ " in top


def test_unmodelled_above_5_percent_is_low_confidence_in_red(qtbot, recorded) -> None:
    recorded["estimate"].update(unmodelled=700, unmodelled_share=0.07, low_confidence=True)
    view = _view(qtbot, recorded)
    assert "LOW CONFIDENCE: unmodelled (7.0%)" in view.estimate.text() and "#b71c1c" in view.estimate.text()


def test_the_runs_one_line_summary_leads_with_the_estimated_ms(recorded) -> None:
    from app.firmware.views import key_numbers

    e = recorded["estimate"]
    bits = key_numbers({"outcome": "PASS", "model": "layernorm_mlp", "board": "stm32l4r5-on-mps2-an386",
                        "profile": recorded})
    ms = next(i for i, b in enumerate(bits) if "ms @" in b)
    assert bits[ms] == f"≈ {e['ms']:.3g} ms @ 120 MHz on stm32l4r5 (estimate ±{e['error_pct']:.0f} %)"
    assert "per inference" in bits[ms + 1]
