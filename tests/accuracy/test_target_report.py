"""The target part of an evaluation as the table and the HTML section show it (a handmade evaluate section:
the real QEMU runs are tests/accuracy/test_on_target.py's, opt-in)."""
from __future__ import annotations

from typing import Any


def _ev(exact: int) -> dict[str, Any]:
    conf = [[3, 1], [0, 4]]
    m = {"top1": 7 / 8, "top5": 1.0, "agreement": 1.0, "confusion": conf, "per_class": {"0": 0.75, "1": 1.0},
         "predictions": [0, 0, 0, 1, 1, 1, 1, 1]}
    summary = ("4/4 target == lowered program bit for bit on mps3-an547 (cortex-m55, qemu): one firmware (the "
               "semihosting runner), 4 runs: the host figures are the target's figures" if exact == 4 else
               f"{exact}/4 target == lowered program bit for bit on mps3-an547 (cortex-m55, qemu): ...; the target "
               "differs on s3 (FAIL, target predicts 0, lowered 1): the host figures are NOT the target's")
    return {"model": "m", "target": "cortex-m55", "flow": "legacy", "data": "d", "samples": 8, "task": "classification",
            "classes": None, "warnings": [], "outputs": [{"index": 0, "shape": [1, 2]}],
            "speed": {k: {"samples_per_s": 1.0} for k in ("float", "fake_quant", "lowered")},
            "models": {"float": m, "fake_quant": m, "lowered": m,
                       "target": {"n": 4, "top1": 0.75, "agreement": 0.75, "lowered_top1_same_samples": 1.0,
                                  "predictions": [0, 0, 0, 0]}},
            "flipped": [], "flips": {"count": 0, "by_layer": [], "samples": []},
            "target_run": {"k": 4, "bit_exact": exact, "summary": summary, "samples": [], "differ": []}}


def test_table_and_html_show_the_target_row_and_verdict() -> None:
    from backend_core.analyses.accuracy.table import summary_lines
    from backend_core.analyses.report.accuracy_html import accuracy_html

    text = "\n".join(summary_lines(_ev(4)))
    row = next(x for x in text.splitlines() if x.startswith("target (4 samples)"))
    assert "75.00 %" in row and "(lowered on the same 4: 100.00 %)" in row
    assert "4/4 target == lowered program bit for bit" in text
    page = accuracy_html(_ev(4))
    assert "<td>target (first 4 samples)</td><td>75.00 %</td>" in page
    assert "<p class='ok'><b>Target:</b> 4/4 target == lowered program bit for bit" in page
    bad = accuracy_html(_ev(3))
    assert "<p class='fb'><b>Target:</b> 3/4 target" in bad and "NOT the target&#x27;s" in bad
