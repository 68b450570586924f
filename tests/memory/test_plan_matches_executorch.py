"""The planned sizes the memory report shows are ExecuTorch's own: the in-memory program that
to_executorch() planned, for the zoo models and several CPUs (mv2 and mv3 with CMLENS_TEST_MEMORY_ALL=1)."""
from __future__ import annotations

import os

import pytest

from backend_core.target.memory import analyze_memory
from backend_core.target.memory.plan import read_plan

from .conftest import lowered_program

CASES = [("ds_cnn", "cortex-m55"), ("ds_cnn", "cortex-m4"), ("ds_cnn", "cortex-m0"),
         ("resnet8", "cortex-m55"), ("deep_autoencoder", "cortex-m55"),
         ("mobilenet_v1_025", "cortex-m55"), ("layernorm_mlp", "cortex-m55"), ("softmax_channels", "cortex-m55"),
         ("maxpool_ceil", "cortex-m55"),
         # the two MobileNets add no op kind the cases above lack and cost ~110 s of the suite: opt-in
         *[pytest.param(m, "cortex-m55", marks=[pytest.mark.slow, pytest.mark.skipif(
             not os.environ.get("CMLENS_TEST_MEMORY_ALL"), reason="opt-in: CMLENS_TEST_MEMORY_ALL=1 (about 2 min)")])
           for m in ("mv2", "mv3")]]


@pytest.mark.parametrize("model,target", CASES)
def test_planned_sizes_are_executorchs_own(model: str, target: str) -> None:
    low = lowered_program(model, target)
    expected = [int(s) for s in low.program.execution_plan[0].non_const_buffer_sizes]
    rep = analyze_memory(low.pte, low.final, target=target)
    assert rep["planned_bytes"] == expected[1:]
    assert rep["arena_bytes"] == sum(expected[1:]) > 0
    assert rep["pte_bytes"] == len(low.pte)
    assert 0 < rep["constant_bytes"] < rep["pte_bytes"]
    # Every planned tensor lies inside its buffer, and the live bytes never exceed the arena.
    plan = read_plan(low.pte)
    for t in plan.tensors.values():
        if t.planned:
            assert t.offset + t.nbytes <= plan.buffer_sizes[t.mem_id], t
    assert 0 < rep["peak_bytes"] <= rep["arena_bytes"]
    assert max(s["live_bytes"] for s in rep["timeline"]) == rep["peak_bytes"]
    # Every instruction is tied to a node of the final graph the user sees.
    ids = {n.id for n in low.final.nodes}
    assert rep["timeline"] and all(s["node"] in ids for s in rep["timeline"])
    assert rep["peak_op"] in ids


def test_garbage_is_not_a_program() -> None:
    from backend_core.common.errors import BadInputError

    with pytest.raises(BadInputError, match="Not an ExecuTorch program"):
        read_plan(b"\x00" * 64)
