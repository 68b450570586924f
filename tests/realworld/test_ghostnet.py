"""timm ghostnet_050 fails in AtenToCortexMPass on the squeeze-excite multiply (issue 26)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend_core.stages.fallback.changed import keep_going_summary
from backend_core.stages.fallback.rewrites import CAT_CONTIGUOUS, NOOP_ALIAS

from .conftest import opt_in
from .helpers import check_repro_fresh, lower, repro

NAME = "ghostnet_050"


@pytest.fixture(scope="module")
def failed() -> Any:
    return lower(NAME)


@pytest.fixture(scope="module")
def kept() -> Any:
    return lower(NAME, keep_going=True)


def test_failure_names_the_users_line(failed: Any) -> None:
    assert failed.status == "failed"
    err = failed.error
    assert err["stage"] == "AtenToCortexMPass"
    f = err["failure"]
    assert f["op"] == "aten.mul.Tensor"
    assert f["source"].endswith("timm/models/_efficientnet_blocks.py:83"), f["source"]
    assert f["code"] == "return x * self.gate(x_se)"
    assert f["module"].endswith(".se") and f["module_type"] == "SqueezeExcite"
    assert f["check"] == "assert self.shape == other.shape or is_channel_broadcast(self, other)"
    assert f["check_at"].endswith("executorch/backends/cortex_m/ops/operators.py:237")
    shapes = [o["shape"] for o in f["operands"]]
    assert shapes == [[1, 60, 12, 12], [1, 60, 1, 1]]
    assert [o["dtype"] for o in f["operands"]] == ["int8", "int8"]
    assert f["operands"][0]["dim_order"] == [0, 1, 2, 3] and all(o["qparams"] for o in f["operands"])


def test_cause_is_the_layout_and_its_producer(failed: Any) -> None:
    f = failed.error["failure"]
    assert "input 0 [1, 60, 12, 12] is not channels-last" in f["cause"]
    assert f["producer"]["source"].endswith("timm/models/ghostnet.py:75")
    assert f["producer"]["code"] == "return out[:, :self.out_chs, :, :]"
    assert any("is_channels_last(input 1) = True" in c for c in f["checked"])
    assert f["same_failure"]          # the other squeeze-excite multiplies fail the same check
    assert f["workaround"] == NOOP_ALIAS and "ghostnet.py:75" in f["workaround_text"]


@opt_in
def test_keep_going_lowers_the_rest(kept: Any) -> None:
    """The squeeze-excite multiplies stay quantized: the no-op view is skipped (AtenToCortexMPass then
    passes) and the GhostModule cats run on NCHW copies (the pre-flight then finds nothing that will
    fail); the same lowering PASSes bit for bit on QEMU M55 (closing note of issue 26)."""
    from backend_core.analyses.preflight import findings_of

    assert kept.status == "done", kept.error
    assert list(kept.verdicts["rewrites"]) == [NOOP_ALIAS, CAT_CONTIGUOUS]
    assert kept.verdicts["rewrites"][NOOP_ALIAS]["producer"]["source"].endswith("timm/models/ghostnet.py:75")
    assert not kept.verdicts["quarantined"]
    assert not [f for f in findings_of(kept.final) if f.certain]
    assert "unknown" not in [n.fallback.category for n in kept.fallbacks()]
    assert sum("quantized_mul" in n.target for n in kept.final.nodes) >= 7
    assert "model.pte" in kept.blobs
    assert "NOT what plain ExecuTorch produces" in keep_going_summary(kept.verdicts)


@opt_in
def test_repro_fails_the_same_way_in_a_fresh_process(tmp_path: Path) -> None:
    rep = repro(NAME, tmp_path)
    check_repro_fresh(rep, "Cortex-M quantized_mul: broadcasting is not yet supported except for channel dim")
    assert rep.op == "aten.mul.Tensor" and len(rep.nodes) <= 3
