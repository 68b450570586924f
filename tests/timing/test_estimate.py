"""The cycle estimate from class counts: the arithmetic, the board's clock and wait states, overrides,
unmodelled classes, the M85-on-M55 stand-in, the measured error read from validation.json, bad input."""
from __future__ import annotations

import pytest

from backend_core.common.errors import BadInputError
from backend_core.target.timing.estimate import check_request, estimate, timing_board
from backend_core.target.timing.model import core_timing, validation

FIT = {"cores": {"cortex-m4": {"stall_per_load": 0.5, "anchor_wait_states": 5}}, "per_wait_state": 0.1,
       "error_pct": {"cortex-m4": 12.5}, "error_basis": "test basis"}
ROW = {"alu": 1000, "mac_simd": 500, "load": 400, "store": 100, "branch_taken": 50, "branch_not_taken": 50}


def _table_cycles(row: dict[str, int], cpu: str) -> float:
    t = core_timing(cpu)
    return sum(n * t.cycles[c] for c, n in row.items())


def test_cycles_are_the_tables_figures_plus_the_fitted_stall_per_load() -> None:
    e = estimate([ROW, None], "cortex-m4", "stm32l4r5", fit=FIT)
    assert e.per_op[0] == pytest.approx(_table_cycles(ROW, "cortex-m4") + 400 * 0.5) and e.per_op[1] == 0
    assert (e.clock_mhz, e.clock_source, e.flash_wait_states) == (120, "board table", 5)
    assert e.ms == pytest.approx(e.cycles / 120e3)
    assert (e.error_pct, e.error_basis) == (12.5, "test basis") and not e.low_confidence


def test_overrides_move_the_clock_and_the_stall_by_the_fitted_per_wait_state() -> None:
    e = estimate([ROW], "cortex-m4", "stm32l4r5", clock_mhz=80, flash_wait_states=2, fit=FIT)
    assert (e.clock_mhz, e.clock_source, e.wait_states_source) == (80, "--clock-mhz", "--flash-wait-states")
    assert e.stall_per_load == pytest.approx(0.5 + 0.1 * (2 - 5))
    zero = estimate([ROW], "cortex-m4", "stm32l4r5", flash_wait_states=0, fit=FIT)
    assert zero.stall_per_load == pytest.approx(0.0) and zero.cycles < e.cycles


def test_a_class_the_core_does_not_have_is_unmodelled_and_lowers_confidence() -> None:
    e = estimate([{**ROW, "mve": 50}], "cortex-m4", "stm32l4r5", fit=FIT)
    assert e.unmodelled == 50 and e.unmodelled_share == pytest.approx(50 / 2150) and e.low_confidence is False
    e = estimate([{**ROW, "unmodelled": 500}], "cortex-m4", "stm32l4r5", fit=FIT)
    assert e.unmodelled_share > 0.05 and e.low_confidence


def test_m85_board_runs_on_the_m55_stream_with_m85_timings_and_says_so() -> None:
    core, board, _ = timing_board("cortex-m55", "ra8d1")
    assert (core, board) == ("cortex-m85", "ra8d1")
    e = estimate([{"mve": 100, "alu": 100}], core, board, stream_core="cortex-m55", fit={})
    assert any("QEMU has no cortex-m85" in n for n in e.notes) and e.clock_mhz == 480
    assert e.error_pct is None and "not validated" in e.error_basis


def test_no_board_means_the_cores_reference_board() -> None:
    core, board, note = timing_board("cortex-m4", "mps2-an386")
    assert (core, board) == ("cortex-m4", "stm32l4r5") and "no MCU board" in note


def test_the_shown_error_is_the_benchs_not_a_constant() -> None:
    v = validation()
    e = estimate([ROW], "cortex-m4", "stm32l4r5")
    assert e.error_pct == v["error_pct"]["cortex-m4"] and v["written_by"] == "bench/cycle_estimate.py"


@pytest.mark.parametrize("cpu, board, clock, ws, words", [
    ("cortex-m4", "stm32l4r5", 900.0, None, ["900", "outside", "1-300 MHz"]),
    ("cortex-m4", "stm32l4r5", 0.5, None, ["0.5", "outside"]),
    ("cortex-m3", None, 50.0, None, ["No timing table for cortex-m3", "cortex-m4", "cortex-m85"]),
    ("cortex-m4", "stm32l4r5", None, -1, ["negative"]),
])
def test_bad_overrides_are_refused_before_any_work(cpu, board, clock, ws, words) -> None:
    with pytest.raises(BadInputError) as exc:
        check_request(cpu, board, clock, ws)
    assert exc.value.exit_code == 2 and all(w in str(exc.value) for w in words)
    check_request(cpu, board, None, None)          # nothing asked: nothing refused


def test_headline_names_cycles_ms_clock_board_and_error() -> None:
    from backend_core.target.profile.text import estimate_headline

    e = estimate([ROW], "cortex-m4", "stm32l4r5", fit=FIT).to_dict()
    text = estimate_headline(e)
    assert text.startswith("≈ ") and " M cycles ≈ " in text and " ms @ 120 MHz on stm32l4r5" in text
    assert "±12 % on published measurements" in text and "LOW CONFIDENCE" not in text
    low = estimate([{**ROW, "unmodelled": 500}], "cortex-m4", "stm32l4r5", fit=FIT).to_dict()
    assert "LOW CONFIDENCE: unmodelled (" in estimate_headline(low)
