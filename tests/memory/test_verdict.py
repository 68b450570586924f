"""Fits / does not fit: at the exact boundary, per contiguous region, and the board table."""
from __future__ import annotations

import json

import pytest

from backend_core.common.errors import BadInputError
from backend_core.target.memory import analyze_memory, attach_board, fit_findings
from backend_core.common.boards.specs import all_boards, board_named, custom_board
from backend_core.common.boards.specs import MCUS_JSON, parse_size

from .conftest import lowered_program


@pytest.fixture(scope="module")
def ds_cnn_report() -> dict:
    low = lowered_program("ds_cnn")
    return analyze_memory(low.pte, low.final)


def _ram_need(rep: dict) -> int:
    ma = rep["method_allocator"]
    return ma["used"] + rep["temp_allocator_bytes"]


def test_verdict_flips_at_the_ram_boundary(ds_cnn_report: dict) -> None:
    need = _ram_need(ds_cnn_report)
    fits = attach_board(dict(ds_cnn_report), custom_board(need, "1M"))["verdict"]
    assert fits["fits"] and fits["ram_free_bytes"] == 0
    short = attach_board(dict(ds_cnn_report), custom_board(need - 1, "1M"))["verdict"]
    assert not short["fits"] and not short["ram_fits"] and short["flash_fits"]
    assert short["ram_free_bytes"] == -1
    assert fit_findings(ds_cnn_report, custom_board(need, "1M")) == []
    f = fit_findings(ds_cnn_report, custom_board(need - 1, "1M"))
    assert [x.rule for x in f] == ["memory-ram-does-not-fit"]
    assert f[0].node == ds_cnn_report["peak_op"] and f[0].certain


def test_verdict_flips_at_the_flash_boundary(ds_cnn_report: dict) -> None:
    pte = ds_cnn_report["pte_bytes"]
    assert attach_board(dict(ds_cnn_report), custom_board("1M", pte))["verdict"]["flash_free_bytes"] == 0
    v = attach_board(dict(ds_cnn_report), custom_board("1M", pte - 1))["verdict"]
    assert not v["fits"] and v["ram_fits"] and v["flash_free_bytes"] == -1
    assert [x.rule for x in fit_findings(ds_cnn_report, custom_board("1M", pte - 1))] == ["memory-flash-does-not-fit"]


def test_the_method_pool_must_fit_one_region(ds_cnn_report: dict) -> None:
    """stm32f746 has 320 KiB in three regions: fine for ds_cnn; a board whose RAM is many small
    regions with enough total does not fit, and says which pool fits nowhere."""
    v = attach_board(dict(ds_cnn_report), board_named("stm32f746"))["verdict"]
    assert v["fits"]
    pool = next(n for n in v["needs"] if n["name"] == "method allocator pool")
    assert pool["region"] in ("DTCM", "SRAM1") and pool["mem_ids"] == [1]
    from backend_core.common.boards.specs import BoardSpec, Region

    need = ds_cnn_report["method_allocator"]["used"]
    split = BoardSpec("split", "cortex-m4", None, tuple(Region(f"R{i}", need // 2, "ram") for i in range(4)), "test")
    v = attach_board(dict(ds_cnn_report), split)["verdict"]
    assert not v["ram_fits"] and "fits no RAM region" in v["problems"][0]


def test_board_table_rows_cite_their_documents() -> None:
    rows = json.loads(MCUS_JSON.read_text())["boards"]
    names = {r["name"] for r in rows}
    assert {"stm32h743", "stm32f746", "stm32l4r5", "nrf5340", "rp2350", "ra8d1", "imxrt1170", "alif-e7"} <= names
    for r in rows:
        assert "http" in r["source"], r["name"]
        assert r["ram"] and all(x["kib"] > 0 for x in r["ram"] + r["flash"])
    boards = all_boards()
    assert {"mps3-an547", "mps2-an386", "corstone-300-fvp", "corstone-320-fvp"} <= set(boards)
    assert boards["stm32f746"].ram_bytes == 320 * 1024 and boards["nrf5340"].flash_bytes == 1024 * 1024


def test_bad_board_and_sizes_name_the_cause() -> None:
    with pytest.raises(BadInputError, match="Unknown board 'stm32f999'") as e:
        board_named("stm32f999")
    assert "stm32f746" in e.value.hint
    with pytest.raises(BadInputError, match="must not be negative"):
        parse_size("-5K")
    with pytest.raises(BadInputError, match="Cannot read the RAM size"):
        parse_size("12Q", "RAM size")
    assert parse_size("256K") == 262144 and parse_size("1M") == 1048576 and parse_size("1.5MiB") == 1572864


def test_a_need_smaller_than_the_largest_region_is_short_by_a_positive_amount() -> None:
    """The pool takes most of the largest region, the stack the other one: the heap, smaller than the
    largest region, fits nowhere. The verdict said "short by -80.0 KiB" (need - largest region size); it is
    short by what the roomiest region lacks once the larger needs are placed."""
    from backend_core.common.boards.specs import BoardSpec, Region
    from backend_core.target.memory.fit import Need, place_needs

    board = BoardSpec("two", "cortex-m7", None, (Region("A", 100 * 1024, "ram"), Region("B", 60 * 1024, "ram"),
                                                 Region("F", 1 << 20, "flash")), "test")
    needs = [Need("pool", 90 * 1024, "ram"), Need("stack", 50 * 1024, "ram"), Need("heap", 20 * 1024, "ram")]
    v = place_needs(needs, board)
    assert not v.ram_fits and v.ram_free_bytes == -10 * 1024
    assert "short by 10.0 KiB" in v.problems[0] and "10.0 KiB of it left" in v.problems[0]
