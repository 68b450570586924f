"""The cortex_m kernels' own layout checks (backends/cortex_m/ops): a CMSIS-NN pooling kernel on a
contiguous tensor is predicted on the node that failed on QEMU M55, and keeping the tensor
channels-last (the suggested fix) clears it."""
from __future__ import annotations

from pathlib import Path

from backend_core.analyses.preflight import certain, findings_of
from tests.preflight.test_preflight_rules import MODELS, lowered


def test_avg_pool_on_a_contiguous_copy_is_predicted(tmp_path: Path) -> None:
    res = lowered(str(MODELS / "contiguous_mean.py"))
    found = [f for f in certain(findings_of(res.final)) if f.rule == "cmsis-needs-channels-last"]
    assert [f.op for f in found] == ["cortex_m.quantized_avg_pool2d.default"]
    f = found[0]
    assert f.source.endswith("cortex_m_ops_common.h:232") and "contiguous" in f.message
    assert any("input = %dim_order_ops__clone_dim_order" in e for e in f.evidence)
    # the fix: no .contiguous() before the mean -> the input stays channels-last, no finding
    near = lowered(f"{MODELS / 'contiguous_mean.py'}:no_contiguous")
    assert not [f for f in findings_of(near.final) if f.rule == "cmsis-needs-channels-last"]
