"""auto picks what the board will need, not the arena alone: more patches mean more kernel calls and tensors,
which Method::load takes from the method pool (measured by a helper on mobilenet_v1_025, int8 input: the 8×8
schedule saved 90 KiB of arena and cost 195 KiB more Method::load than 4×4)."""
from __future__ import annotations

from backend_core.analyses.schedule.measure import Measured
from backend_core.analyses.schedule.search import Candidate, SearchResult, pareto, pick


def _cand(grid: int, arena: int, method_load: int, extra: float) -> Candidate:
    m = Measured(arena, 0, 100_000, 50_000, 40 * grid * grid, method_load)
    return Candidate("conv2d_default_2", (grid, grid), True, "greedy", m, 1_000_000, extra, 0, 0, bit_exact=True)


def test_auto_counts_method_load_so_more_patches_can_lose() -> None:
    four = _cand(4, arena=140_000, method_load=80_000, extra=0.05)
    eight = _cand(8, arena=48_000, method_load=228_000, extra=0.09)
    assert eight.total_ram < four.total_ram                     # the arena alone would pick 8×8
    front = pareto([four, eight])
    result = SearchResult(_cand(1, 138_000, 28_000, 0.0).measured, 1_000_000, 0, "", 0, "", front, 2)
    assert pick(result) is four
    assert four.to_dict()["measured"]["ram_need_bytes"] == 220_000


def test_a_reader_of_older_reports_sees_no_method_load_as_zero() -> None:
    m = Measured(1000, 24, 10, 5, 3)
    assert m.ram_need == m.total_ram == 1024
