"""timm efficientvit_m0 fails in ReplaceScalarWithTensorArgPass: a bmm the quantizer left in float gets
one int8 and one float32 input after FoldAndAnnotateQParamsPass (issue 26)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import os

import pytest

from .helpers import check_keep_going, check_repro_fresh, lower, repro

NAME = "efficientvit_m0"
# about 8 minutes of both cores (two lowerings of a 1,900-node attention model, keep-going quarantines
# whole modules): kept out of `make test`, which holds the ghostnet_050 and lcnet_050 sample; run it
# with CMLENS_REALWORLD_ALL=1 (bench/realworld.py runs every corpus model)
pytestmark = pytest.mark.skipif(not os.environ.get("CMLENS_REALWORLD_ALL"),
                                reason="opt-in (about 8 min): set CMLENS_REALWORLD_ALL=1; bench/realworld.py "
                                       "covers it")


@pytest.fixture(scope="module")
def failed() -> Any:
    return lower(NAME)


def test_failure_names_the_users_line(failed: Any) -> None:
    assert failed.status == "failed"
    assert failed.error["stage"] == "ReplaceScalarWithTensorArgPass"
    f = failed.error["failure"]
    assert f["op"] == "aten.bmm.default"
    assert f["source"].endswith("timm/models/efficientvit_msra.py:297"), f["source"]
    assert f["code"] == "attn = q.transpose(-2, -1) @ k"
    assert f["module"].endswith("mixer.m.attn") and f["module_type"] == "CascadedGroupAttention"
    assert [o["dtype"] for o in f["operands"]] == ["int8", "float32"]
    assert "batch1.dtype == batch2.dtype" in f["check"]
    assert f["error"] == "expected scalar type torch.int8 but found torch.float32"


def test_cause_names_the_float_producer(failed: Any) -> None:
    f = failed.error["failure"]
    assert "gets input 0 as int8 and input 1 as float32" in f["cause"]
    assert f["producer"]["op"] == "aten.split_with_sizes_copy.default"
    assert f["producer"]["source"].endswith("timm/models/efficientvit_msra.py:293")


def test_keep_going_lowers_the_rest() -> None:
    check_keep_going(lower(NAME, keep_going=True))


@pytest.mark.xfail(strict=True, raises=Exception, reason="not reduced yet: no subgraph of the float graph up to "
                   "depth 6 around the bmm (nor with its users) fails this way on its own; the mixed-dtype "
                   "chain needs more of the model (open item of issue 26)")
def test_repro_fails_the_same_way_in_a_fresh_process(tmp_path: Path) -> None:
    rep = repro(NAME, tmp_path)
    check_repro_fresh(rep, "expected scalar type torch.int8 but found torch.float32")
