"""The per-op timeline: peak, float islands, scratch per CPU."""
from __future__ import annotations

import pytest

from backend_core.target.memory import analyze_memory

from .conftest import lowered_program


@pytest.mark.parametrize("model", ["ds_cnn", "deep_autoencoder"])
def test_sequential_model_peaks_at_the_planned_arena(model: str) -> None:
    low = lowered_program(model)
    rep = analyze_memory(low.pte, low.final)
    assert rep["peak_bytes"] == rep["arena_bytes"]
    peak = rep["timeline"][rep["peak_index"]]
    assert peak["node"] == rep["peak_op"]


def test_layernorm_is_a_float_island_at_the_peak() -> None:
    low = lowered_program("layernorm_mlp")
    rep = analyze_memory(low.pte, low.final)
    islands = rep["float_islands"]
    assert [i["nodes"] for i in islands] == [["aten_native_layer_norm_default"]]
    isl = islands[0]
    assert isl["at_peak"] and rep["peak_op"] == "aten_native_layer_norm_default"
    assert isl["extra_vs_int8"] == isl["float_bytes"] - isl["float_bytes"] // 4 > 0
    assert any("float island aten_native_layer_norm_default" in s for s in rep["suggestions"])


def test_scratch_bytes_differ_per_cpu_as_cmsis_nn_sizes_them() -> None:
    # CMSIS-NN buffer sizes by kernel family (FACTS: ds_cnn 0 B on M0, 256 B on M4, 20,608 B on M55)
    totals = {}
    for t in ("cortex-m0", "cortex-m4", "cortex-m55"):
        low = lowered_program("ds_cnn", t)
        rep = analyze_memory(low.pte, low.final)
        totals[t] = sum(s["bytes"] for s in rep["scratch"])
        assert all(s["node"].startswith("cortex_m_") for s in rep["scratch"])
    assert totals == {"cortex-m0": 0, "cortex-m4": 256, "cortex-m55": 20608}


def test_html_section_shows_the_plan_and_one_bar_per_op() -> None:
    from backend_core.target.memory import attach_board
    from backend_core.common.boards.specs import board_named
    from backend_core.target.memory.html import memory_html

    low = lowered_program("ds_cnn")
    rep = attach_board(analyze_memory(low.pte, low.final), board_named("nrf5340"))
    page = memory_html(rep)
    assert "planned arena, memory id 1</td><td>20,464" in page
    assert page.count("<rect ") == len(rep["timeline"]) and "fits nrf5340" in page
