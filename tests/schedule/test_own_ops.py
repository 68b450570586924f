"""The project's own copy ops (cmlens::window, cmlens::tiles: own_ops.py on the host, kernels/ops on the
target) and multi-stage splits: the reference computes what the C++ does (borders at the pad value, any
input dim order, channels-last out), the rewrite with them is bit for bit on the host with no portable
slice/pad/cat left, two stages too, and a malformed stage is refused."""
from __future__ import annotations

import pytest
import torch

from backend_core.analyses.schedule import own_ops  # noqa: F401  (registers torch.ops.cmlens)
from backend_core.analyses.schedule.geometry import target_of
from backend_core.analyses.schedule.rewrite import parse_stages, schedule_program
from backend_core.analyses.schedule.search import _outputs, bit_exact, host_inputs, two_stage_specs
from backend_core.analyses.schedule.prefix import split_candidates
from backend_core.common.errors import BadInputError

STAGES = "cortex_m_quantized_add_default@2x2,cortex_m_quantized_depthwise_conv2d_default_1@3x3"


def _count(program, name: str) -> int:
    return sum(1 for n in program.graph.nodes if n.op == "call_function" and name in target_of(n))


@pytest.mark.parametrize("layout", [torch.contiguous_format, torch.channels_last])
def test_window_pads_outside_the_tensor_and_writes_channels_last(layout) -> None:
    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.int8).reshape(2, 3, 4, 5).contiguous(memory_format=layout)
    w = torch.ops.cmlens.window(x, [-1, 3, 2, 6], -7)
    assert w.shape == (2, 3, 4, 4) and w.is_contiguous(memory_format=torch.channels_last)
    assert (w[:, :, 0] == -7).all() and (w[:, :, :, 3] == -7).all()       # above row 0, right of column 4
    assert torch.equal(w[:, :, 1:, :3], x[:, :, 0:3, 2:5])
    inside = torch.ops.cmlens.window(x, [1, 3, 0, 5], 0)
    assert torch.equal(inside, x[:, :, 1:3])


def test_tiles_puts_each_patch_in_its_place() -> None:
    x = torch.randint(-128, 127, (1, 4, 7, 9), dtype=torch.int8).contiguous(memory_format=torch.channels_last)
    parts = [x[:, :, h0:h1, w0:w1] for h0, h1 in ((0, 3), (3, 7)) for w0, w1 in ((0, 2), (2, 6), (6, 9))]
    out = torch.ops.cmlens.tiles(parts, 3)
    assert torch.equal(out, x) and out.is_contiguous(memory_format=torch.channels_last)
    with pytest.raises(ValueError):
        torch.ops.cmlens.tiles(parts, 4)


@pytest.mark.parametrize("split,grid,int8", [
    ("cortex_m_quantized_conv2d_default_2", (3, 4), True),
    ("cortex_m_quantized_add_default", (5, 1), False),
    (STAGES, (2, 2), True),
    ("cortex_m_quantized_add_default,cortex_m_quantized_depthwise_conv2d_default_1", (2, 2), False),
])
def test_the_own_ops_rewrite_is_bit_exact_without_portable_copies(patch_net, split: str, grid: tuple,
                                                                  int8: bool) -> None:
    ep, inputs = patch_net.pipeline.final_program, patch_net.pipeline.example_inputs
    r = schedule_program(ep, split, grid, "cortex-m55", int8=int8)
    assert r.windows == _count(r.program, "cmlens.window") > 0
    assert r.tiles == _count(r.program, "cmlens.tiles") == len(r.stages) == split.count(",") + 1
    assert not (_count(r.program, "slice_copy") or _count(r.program, "aten.cat") or _count(r.program, "cortex_m.pad")
                or _count(r.program, "_clone_dim_order"))
    quant = r.input_quant.to_dict() if int8 else None
    assert bit_exact(_outputs(ep, inputs), r.program, host_inputs(r.program, inputs, quant))


def test_a_wrong_window_is_caught(patch_net) -> None:
    ep, inputs = patch_net.pipeline.final_program, patch_net.pipeline.example_inputs
    r = schedule_program(ep, STAGES, (2, 2), "cortex-m55", int8=True)
    borders = [n for n in r.program.graph.nodes if "cmlens.window" in target_of(n) and min(n.args[1][::2]) < 0]
    assert borders
    for win in borders:                                                      # borders at the wrong zero point
        win.args = (win.args[0], win.args[1], 127)
    r.program.graph_module.recompile()
    assert not bit_exact(_outputs(ep, inputs), r.program, host_inputs(r.program, inputs, r.input_quant.to_dict()))


def test_stage_specs_are_parsed_and_bad_ones_refused(patch_net) -> None:
    assert parse_stages("A@2x3, B", (4, 4)) == [("A", (2, 3)), ("B", (4, 4))]
    assert parse_stages("", (4, 4)) == []
    with pytest.raises(BadInputError, match="SPLIT@RxC"):
        parse_stages("A@2by3", (4, 4))
    ep = patch_net.pipeline.final_program
    with pytest.raises(BadInputError, match="not a valid split point"):      # stage 2 before stage 1
        schedule_program(ep, "cortex_m_quantized_depthwise_conv2d_default_1,cortex_m_quantized_add_default", (2, 2),
                         "cortex-m55")


def test_the_search_proposes_two_stages_split_at_the_smallest_tensor_between(patch_net) -> None:
    from backend_core.analyses.schedule.prefix import nbytes

    ep = patch_net.pipeline.final_program
    cands, _ = split_candidates(ep)
    specs = two_stage_specs(ep, cands[1:], (2, 3, 4), 0, budget=10.0)
    assert specs
    first, second = (part.split("@")[0] for part in specs[0][0].split(","))
    names = [p.name for p in cands]
    between = [p for p in cands[1:names.index(second)]]
    assert first == min(between, key=lambda p: (nbytes(p.split), names.index(p.name))).name
    assert all(s.startswith(f"{first}@{g[0]}x{g[0]},{second}@") for s, g in specs)
    assert {g for _, g in specs} <= {(2, 2), (3, 3), (4, 4)}
    assert any(s.endswith("@2x2") and g == (4, 4) for s, g in specs)           # stage 2 in half the grid
    assert two_stage_specs(ep, cands[1:], (2, 3, 4), 0, budget=0.0) == []       # over the MAC budget: not tried
