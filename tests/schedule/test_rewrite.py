"""The patch rewrite computes the unscheduled program's values bit for bit on the host (the cortex_m
reference kernels), at several split points and grids, with the float and the int8 input; and a
wrong rewrite is caught (the check can fail)."""
from __future__ import annotations

import pytest

from backend_core.analyses.schedule.geometry import target_of
from backend_core.analyses.schedule.measure import measure_pte, program_macs, serialise
from backend_core.analyses.schedule.prefix import layer_floor, nbytes, patch_floor, split_candidates, user_input
from backend_core.analyses.schedule.rewrite import schedule_program
from backend_core.analyses.schedule.search import _outputs, bit_exact, host_inputs, pick, search
from backend_core.common.errors import BadInputError


def _ops(program, name: str) -> list:
    return [n for n in program.graph.nodes if n.op == "call_function" and name in target_of(n)]


@pytest.mark.parametrize("split,grid,int8", [
    ("cortex_m_quantized_conv2d_default_2", (2, 2), False),     # the residual block and the dilated conv
    ("cortex_m_quantized_conv2d_default_2", (3, 4), True),      # uneven patches, int8 input
    ("cortex_m_quantized_depthwise_conv2d_default_1", (4, 3), True),   # stride 2 at the end
    ("cortex_m_quantized_add_default", (5, 1), False),          # strips: W whole, W padding folded into the convs
])
def test_patch_rewrite_is_bit_exact_on_the_host(patch_net, split: str, grid: tuple, int8: bool) -> None:
    """The portable road (slice_copy, cortex_m.pad, cat); the own ops' road: test_own_ops.py."""
    ep, inputs = patch_net.pipeline.final_program, patch_net.pipeline.example_inputs
    r = schedule_program(ep, split, grid, "cortex-m55", int8=int8, copies="portable")
    stem_convs = _ops(r.program, "quantized_conv2d")
    assert len(stem_convs) > grid[0] * grid[1]                  # the prefix runs once per patch
    assert len(_ops(r.program, "aten.cat")) == (grid[1] > 1) * grid[0] + (grid[0] > 1)
    assert not _ops(r.program, "constant_pad_nd")               # border padding: the conv's own or cortex_m.pad
    if grid == (5, 1):     # the stride-2 stem folds its top border; the 3x3 depthwise pads the top and bottom strips
        assert r.pads == 2 == len(_ops(r.program, "cortex_m.pad"))
    assert (r.input_quant is not None) == int8
    if int8:
        assert str(user_input(r.program).meta["val"].dtype) == "torch.int8"
    plain = _outputs(ep, inputs)
    assert bit_exact(plain, r.program, host_inputs(r.program, inputs, r.input_quant.to_dict() if int8 else None))
    assert program_macs(r.program) > program_macs(ep)           # the halos are recomputed


def test_the_scheduled_program_passes_the_preflight(patch_net) -> None:
    """What the target checks: portable slice_copy/cat want one dim order and index by logical strides, the
    CMSIS-NN kernels want channels-last; the pre-flight predicted these failures on QEMU (FACTS)."""
    from backend_core.orchestration.jobs.steps.schedule import preflight_of

    for int8, copies in ((True, "cmlens"), (False, "cmlens"), (True, "portable"), (False, "portable")):
        r = schedule_program(patch_net.pipeline.final_program, "cortex_m_quantized_conv2d_default_2", (2, 3),
                             "cortex-m55", int8=int8, copies=copies)
        assert preflight_of(r.program, serialise(r.program)) == []
        assert list(user_input(r.program).meta["val"].dim_order()) == [0, 1, 2, 3]     # the caller gives NCHW


def test_a_wrong_rewrite_is_caught(patch_net) -> None:
    ep, inputs = patch_net.pipeline.final_program, patch_net.pipeline.example_inputs
    r = schedule_program(ep, "cortex_m_quantized_conv2d_default_2", (2, 2), "cortex-m55", copies="portable")
    conv = next(n for n in _ops(r.program, "quantized_conv2d") if list(n.args[4]) == [0, 0] and
                n.args[1].meta["val"].shape[1] == 3)
    conv.args = (*conv.args[:6], int(conv.args[6]) + 1, *conv.args[7:])   # its input offset off by one
    r.program.graph_module.recompile()
    assert not bit_exact(_outputs(ep, inputs), r.program, inputs)


def test_ds_cnn_is_bit_exact_and_the_search_never_makes_it_worse(ds_cnn) -> None:
    ep, inputs = ds_cnn.pipeline.final_program, ds_cnn.pipeline.example_inputs
    r = schedule_program(ep, "cortex_m_quantized_conv2d_default_3", (5, 1), "cortex-m55", int8=True)
    assert bit_exact(_outputs(ep, inputs), r.program, host_inputs(r.program, inputs, r.input_quant.to_dict()))
    # its peak is CMSIS-NN scratch beside small tensors: no patch schedule beats the plain program
    found = search(ep, inputs, "cortex-m55", grids=(5,), splits=["cortex_m_quantized_conv2d_default_3"],
                   planners=("greedy",))
    best = pick(found)
    assert best.total_ram <= found.plain.total_ram and best.bit_exact
    assert all(c.bit_exact for c in found.front) and found.tried >= 2


def test_floors_are_at_most_the_plain_arena(patch_net, ds_cnn) -> None:
    for low in (patch_net, ds_cnn):
        ep = low.pipeline.final_program
        arena = measure_pte(serialise(ep)).arena_bytes
        floor, op = layer_floor(ep)
        assert 0 < floor <= arena and op
        cands, _ = split_candidates(ep)
        x = nbytes(user_input(ep))
        assert min(patch_floor(ep, p, x) for p in cands) <= floor


def test_a_grid_larger_than_the_tensor_and_a_bad_split_are_refused(patch_net) -> None:
    ep = patch_net.pipeline.final_program
    with pytest.raises(BadInputError, match="does not fit"):
        schedule_program(ep, "cortex_m_quantized_depthwise_conv2d_default_1", (9, 2), "cortex-m55")
    with pytest.raises(BadInputError, match="not a valid split point"):
        schedule_program(ep, "cortex_m_quantized_depthwise_conv2d_default", (2, 2), "cortex-m55")   # inside a block


def test_the_split_chooser_estimates_the_halo_recompute_of_the_rewrite(patch_net) -> None:
    from backend_core.analyses.schedule.search import estimated_extra_macs

    ep = patch_net.pipeline.final_program
    for p in split_candidates(ep)[0][2:4]:
        r = schedule_program(ep, p.name, (3, 2), "cortex-m55")
        assert estimated_extra_macs(ep, p, (3, 2)) == pytest.approx(program_macs(r.program) / program_macs(ep) - 1)
