"""The search's shortcuts change nothing it finds: the RAM-need floor a candidate is skipped on (bound.py)
is at most what ExecuTorch's plan of that candidate measures, so a skipped candidate could never have been
on the Pareto front; and a candidate skipped because of one that then fails the host check is measured."""
from __future__ import annotations

import pytest

from backend_core.analyses.schedule.bound import method_load_floor, ram_need_floor
from backend_core.analyses.schedule.measure import measure_pte, serialise
from backend_core.analyses.schedule.rewrite import schedule_program
from backend_core.analyses.schedule.search import _Runs, pareto, pick, search


@pytest.mark.parametrize("split,grid,int8", [
    ("cortex_m_quantized_conv2d_default_2", (2, 2), False),
    ("cortex_m_quantized_conv2d_default_2", (4, 4), True),
    ("cortex_m_quantized_add_default", (5, 1), True),
    ("cortex_m_quantized_add_default@3x3,cortex_m_quantized_conv2d_default_2@2x2", (3, 3), True),
])
def test_the_floor_is_at_most_the_measured_ram_need(patch_net, split: str, grid: tuple, int8: bool) -> None:
    ep = patch_net.pipeline.final_program
    r = schedule_program(ep, split, grid, "cortex-m55", int8=int8)
    m = measure_pte(serialise(r.program))
    floor = ram_need_floor(r.program)
    assert 0 < method_load_floor(r.program) <= m.method_load_bytes
    assert 0 < floor <= m.ram_need


def test_skipped_candidates_lose_and_come_back_when_their_winner_is_dropped(patch_net) -> None:
    ep, inputs = patch_net.pipeline.final_program, tuple(patch_net.pipeline.example_inputs)
    found = search(ep, inputs, "cortex-m55", int8=True, grids=(2, 4, 6), planners=("greedy",))
    assert pick(found).bit_exact and all(c.bit_exact for c in found.front)
    assert found.tried > len(found.front)
    runs = _Runs(ep, "cortex-m55", True, found.plain, found.plain_macs, "greedy")
    first = runs.measured("cortex_m_quantized_add_default", (2, 2), "greedy")
    # a rival that beats everything on both axes: the next candidate is skipped, not serialised
    rival = type(first)(**{**first.__dict__, "measured": type(first.measured)(
        **{**first.measured.__dict__, "arena_bytes": 0, "io_outside_bytes": 0, "method_load_bytes": 0}),
        "extra_macs": -1.0})
    assert runs.unless_beaten("cortex_m_quantized_add_default", (4, 4), "greedy", [rival]) is None
    assert runs.skipped and ("cortex_m_quantized_add_default", (4, 4)) not in runs.programs
    # the rival is dropped (as a failed host check drops it): the skipped candidate is measured after all
    back = runs.revive([first])
    assert [(c.split, c.grid) for c in back] == [("cortex_m_quantized_add_default", (4, 4))] and not runs.skipped
    assert pareto([first, *back])


def test_the_int8_search_never_splits_at_the_quantize_it_removes(patch_net) -> None:
    # BasicUNet's patchable region is the quantize and one conv: the int8 search named the quantize
    # (which the int8 input replaces) as a split and stopped with "not a valid split point"
    from backend_core.analyses.schedule.prefix import user_input

    ep, inputs = patch_net.pipeline.final_program, tuple(patch_net.pipeline.example_inputs)
    q = next(iter(user_input(ep).users)).name
    found = search(ep, inputs, "cortex-m55", int8=True, grids=(2,), planners=("greedy",),
                   splits=[q, "cortex_m_quantized_conv2d_default"], check="chosen")
    assert {c.split for c in found.front} <= {"", "cortex_m_quantized_conv2d_default"} and pick(found).bit_exact
