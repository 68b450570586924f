"""The pre-flight groups its findings by rule and op (issue 38: a DenseNet printed 38 identical batch-norm
entries): one entry with the count, the first nodes and one fix, in `cmlens check` and the run's gate."""
from __future__ import annotations

import io

from app.cli.check import print_findings
from backend_core.common.finding import MAY_FAIL, WILL_FAIL, Finding, group_findings
from backend_core.analyses.preflight.gate import PreflightError

BN = "aten._native_batch_norm_legit_no_training.default"


def _findings() -> list[Finding]:
    bn = [Finding(f"bn_{i}", "needs-contiguous", f"The portable kernel of {BN} only handles contiguous tensors "
                  f"(node {i}).", "Add `.contiguous()` on the input.", WILL_FAIL, (f"input of bn_{i}",), op=BN)
          for i in range(38)]
    cat = [Finding(f"cat_{i}", "layout-ignored", "cat scrambles channels-last rows.", "Make the inputs contiguous.",
                   WILL_FAIL, op="aten.cat.default") for i in range(2)]
    maybe = [Finding("sm", "needs-contiguous", "may", "fix", MAY_FAIL, op=BN)]
    return bn[:20] + cat + bn[20:] + maybe


def test_groups_by_certainty_rule_and_op() -> None:
    groups = group_findings(_findings())
    assert [(g.first.rule, g.count, g.first.certainty) for g in groups] == [
        ("needs-contiguous", 38, WILL_FAIL), ("layout-ignored", 2, WILL_FAIL), ("needs-contiguous", 1, MAY_FAIL)]
    assert groups[0].nodes[:3] == ("bn_0", "bn_1", "bn_2")
    assert groups[0].head() == f"will fail  [needs-contiguous] {BN} ×38: bn_0, bn_1, bn_2, …"


def test_check_prints_one_entry_per_group() -> None:
    out = io.StringIO()
    print_findings(_findings(), out)
    text = out.getvalue()
    assert text.count("Add `.contiguous()` on the input.") == 1          # one fix, not 38
    assert f"{BN} ×38" in text and "bn_0, bn_1, bn_2, … (35 more; -v lists them)" in text
    assert "bn_37" not in text
    out = io.StringIO()
    print_findings(_findings(), out, verbose=True)
    assert "bn_37" in out.getvalue()


def test_gate_error_names_the_groups() -> None:
    err = PreflightError([f for f in _findings() if f.certain])
    assert "40 finding(s) of 2 kind(s)" in err.message
    assert len(err.detail.splitlines()) == 2 and "×38" in err.detail
