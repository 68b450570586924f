"""A fix text says what the call actually uses (issue 46)."""
from __future__ import annotations


def test_the_max_pool_fix_names_only_what_the_call_uses() -> None:
    """nn.MaxPool1d(2) has ceil_mode=False and no dilation: telling its user to use them was no help (issue 46)."""
    from backend_core.stages.fallback.suggestions import maxpool2d_fix, suggestion_for

    assert "no 1-D max pool" in suggestion_for("max_pool1d", "not_annotated", "max_pool2d_with_indices")
    assert "ceil_mode" not in suggestion_for("max_pool1d", "not_annotated", "max_pool2d_with_indices")
    plain = ("x", "[2, 2]", "[2, 2]", "[0, 0]", "[1, 1]", "False")
    assert maxpool2d_fix(plain) == ""
    assert maxpool2d_fix(("x", "[2, 2]", "[2, 2]", "[0, 0]", "[1, 1]", "True")) == (
        "Use ceil_mode=False (pad the input to keep the output size), so max_pool2d maps to arm_max_pool_s8.")
    assert "no dilation (it has [2, 2])" in maxpool2d_fix(("x", "[2, 2]", "[2, 2]", "[0, 0]", "[2, 2]"))
    assert suggestion_for("max_pool2d", "rejected_by_quantizer", args=plain) == suggestion_for("x", "rejected_by_quantizer")
