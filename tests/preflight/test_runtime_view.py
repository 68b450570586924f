"""The kernel rules judge what the runtime will see: the serialised program's kernel calls and tensors,
including the calls to_executorch inserts, not the graph before serialisation (issue 21: four false
alarms on ExecuTorch's own mean cases, which PASS bit-exactly on QEMU M55)."""
from __future__ import annotations

import pytest

from backend_core.analyses.preflight import certain, check_snapshot
from backend_core.analyses.preflight.cortex_m_rules import is_channels_last_tensor
from backend_core.analyses.preflight.dim_order import is_channels_last, is_contiguous, same_dim_order, strides
from backend_core.analyses.preflight.program_view import match_nodes, read_program
from tests.preflight.test_preflight_rules import GATE, MODELS, lowered

CHANNEL_MEAN = str(MODELS / "channel_mean.py")


def test_channel_mean_is_not_a_false_alarm() -> None:
    """The final graph reads a channels-last tensor into a contiguous mean output; the program has a
    contiguous _to_dim_order_copy before aten::mean.out (LegalizePortableDimOrderPass), so nothing fails."""
    res = lowered(CHANNEL_MEAN)
    mean = next(n for n in res.final.nodes if n.target == "aten.mean.dim")
    src = res.final.node(mean.inputs[0])
    assert (src.dim_order, mean.dim_order) == ((0, 2, 3, 1), (0, 1, 2, 3))       # what fooled the old rule
    assert res.preflight == [], [f.line() for f in res.preflight]

    view = match_nodes(read_program(res.blobs["model.bpte"]), res.final)
    names = [c.name for c in view.calls]
    assert names.index("dim_order_ops::_to_dim_order_copy.out") == names.index("aten::mean.out") - 1
    copy = view.calls[names.index("dim_order_ops::_to_dim_order_copy.out")]
    call = view.calls[names.index("aten::mean.out")]
    assert copy.inserted and copy.for_node == mean.id and call.node == mean.id
    self_t = view.tensor(call.args[0])
    assert self_t.sizes == (1, 8, 4, 4) and self_t.dim_order == (0, 1, 2, 3)   # the runtime's view


@pytest.mark.parametrize("name", ["channel", "all_but_batch", "one_spatial_dim", "accumulate_dtype"])
def test_executorch_mean_fallback_cases_have_no_certain_finding(name: str) -> None:
    """The four cases the issue measured: predicted "will fail", PASS on QEMU."""
    from executorch.backends.cortex_m.test.ops.test_mean import fallback_test_cases

    from backend_core.stages.models.spec import LoadedModel, ModelSpec
    from backend_core.stages.pipeline import LoweringPipeline, PipelineOptions
    from backend_core.stages.pipeline.program_files import pte_bytes

    case = fallback_test_cases[name]
    model = LoadedModel(name, case.model.eval(), tuple(case.get_example_inputs()), ModelSpec("python", name))
    pipe = LoweringPipeline(model, PipelineOptions(target="cortex-m55"), keep_edge_program=False)
    for _ in pipe.run():
        pass
    found = check_snapshot(pipe.snapshots[-1], program=pte_bytes(pipe.final_program))
    assert certain(found) == [], [f.line() for f in found]


def test_program_view_reads_what_executorch_serialised() -> None:
    """The torch-free reader agrees with ExecuTorch's own deserialiser on every kernel call."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    res = lowered(GATE)
    plan = deserialize_pte_binary(res.blobs["model.pte"]).program.execution_plan[0]
    theirs = [(plan.operators[i.instr_args.op_index].name, [
        (tuple(plan.values[a].val.sizes), tuple(plan.values[a].val.dim_order))
        for a in i.instr_args.args if type(plan.values[a].val).__name__ == "Tensor"])
        for ch in plan.chains for i in ch.instructions if hasattr(i.instr_args, "op_index")]
    view = read_program(res.blobs["model.bpte"])
    ours = [(c.op, [(t.sizes, t.dim_order) for a in c.args for t in [view.tensor(a)] if t]) for c in view.calls]
    assert [op for op, _ in theirs] == [op for op, _ in ours]
    for (_, t), (_, o) in zip(theirs, ours):      # theirs lists the returned tensor again at the end
        assert t[:len(o)] == o and len(t) - len(o) in (0, 1, 2)


def test_size_one_dimensions_follow_each_runtime_predicate() -> None:
    """[1, 1, 4, 4]: the cortex_m kernels' is_channels_last_tensor accepts it in either dim order (one
    channel: ambiguous); the portable kernels' predicates test the stored dim order literally, so
    there a contiguous and a channels-last [1, 1, 4, 4] still differ; and their strides differ too,
    which is what the bundle's tensors_are_close compares."""
    assert is_channels_last_tensor((1, 1, 4, 4), (0, 1, 2, 3)) and is_channels_last_tensor((1, 1, 4, 4), (0, 2, 3, 1))
    assert is_channels_last_tensor((1, 8, 1, 1), (0, 1, 2, 3))
    assert not is_channels_last_tensor((1, 8, 4, 4), (0, 1, 2, 3)) and not is_channels_last_tensor((8, 4, 4), (0, 1, 2))
    assert is_contiguous((0, 1, 2, 3)) and not is_channels_last((0, 1, 2, 3))
    assert not same_dim_order([(0, 2, 3, 1), (0, 1, 2, 3)])
    assert strides((1, 1, 4, 4), (0, 2, 3, 1)) == (16, 1, 4, 1) and strides((1, 1, 4, 4), (0, 1, 2, 3)) == (16, 16, 4, 1)


def test_real_catches_are_still_caught_on_the_program() -> None:
    res = lowered(GATE)
    found = certain(res.preflight)
    assert [(f.rule, res.final.node(f.node).target) for f in found] == [
        ("layout-ignored", "aten.cat.default"), ("dim-order-mismatch", "aten._softmax.default")]
    assert all(any(e.startswith("program: instruction") for e in f.evidence) for f in found)
