"""The HTML report groups the pre-flight by rule and op (issue 38): 38 identical batch-norm findings are one
row with their count and first nodes, as the CLI prints them."""
from __future__ import annotations

from backend_core.analyses.report.interactive.summary import details_html


def _finding(node: str, rule: str = "needs-contiguous", op: str = "aten._native_batch_norm_legit_no_training.default"):
    return {"certainty": "will fail", "node": node, "op": op, "rule": rule,
            "message": "the portable kernel checks the input's dim order and aborts on channels-last",
            "fix": "run it on an NCHW copy (--keep-going does)", "evidence": [f"{node}: dim order (0, 2, 3, 1)"]}


def test_identical_findings_are_one_row_with_their_count() -> None:
    report = {"preflight": [_finding(f"bn_{i}") for i in range(38)] + [_finding("cat", "dim-order-mismatch", "aten.cat.default")],
              "stages": [], "quantizer": {}}
    html = details_html(report)
    assert "39 finding(s) of 2 kind(s)" in html
    assert html.count("<tr><td class='fb'>") == 2
    assert "×38</b> bn_0, bn_1, bn_2, …" in html and "bn_3" not in html


def test_a_cancelled_report_has_no_preflight_and_still_renders() -> None:
    html = details_html({"preflight": None, "fallbacks": None, "stages": [], "quantizer": {}})
    assert "0 finding(s)" in html
