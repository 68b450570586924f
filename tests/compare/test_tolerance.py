"""The stated qparams tolerance and the gate's limits, on plain data (no lowering)."""
from __future__ import annotations

import pytest

from backend_core.orchestration.compare.gate import parse_limit
from backend_core.orchestration.compare.qparams import DEFAULT_RTOL, qparam_differences
from backend_core.common.errors import BadInputError

Q = {"output": {"dtype": "int8", "scale": 0.0123456789, "zero_point": -3, "qmin": -128, "qmax": 127},
     "inputs": {"1": {"dtype": "int8", "scale": 0.002, "zero_point": 0, "qmin": -127, "qmax": 127, "axis": 0,
                      "scales": [0.001, 0.002, 0.003]}},
     "requant": {"effective_scales": [0.25, 0.5], "output_offset": 3, "activation_min": -128}}


def _with(path: str, value) -> dict:
    import copy

    q = copy.deepcopy(Q)
    *head, last = path.split(".")
    d = q
    for k in head:
        d = d[k]
    d[last] = value
    return q


def test_rounding_noise_is_not_a_difference() -> None:
    noisy = _with("output.scale", Q["output"]["scale"] * (1 + 5e-7))
    noisy["inputs"]["1"]["scales"] = [s * (1 - 3e-7) for s in Q["inputs"]["1"]["scales"]]
    noisy["output"]["zero_point"] = -2                 # one step: a zero point rounded the other way
    noisy["requant"]["output_offset"] = 2
    assert qparam_differences(Q, noisy) == []


@pytest.mark.parametrize("path, value, says", [
    ("output.scale", 0.0123456789 * (1 + 10 * DEFAULT_RTOL), "output.scale"),
    ("output.zero_point", -5, "output.zero_point: -3 -> -5"),
    ("output.dtype", "int16", "output.dtype: int8 -> int16"),
    ("inputs.1.scales", [0.001, 0.002], "inputs.1.scales: 3 -> 2 values"),
    ("inputs.1.scales", [0.001, 0.0021, 0.003], "1 of 3 differ"),
    ("requant.effective_scales", [0.25, 0.51], "requant.effective_scales"),
    ("output.qmin", -127, "output.qmin: -128 -> -127"),
])
def test_real_changes_are_named(path: str, value, says: str) -> None:
    diffs = qparam_differences(Q, _with(path, value))
    assert len(diffs) == 1 and says in diffs[0]


def test_only_fields_both_sides_carry_are_compared() -> None:
    program_side = {"requant": dict(Q["requant"])}       # a .pte: requantisation, no output qparams
    assert qparam_differences(Q, program_side) == []


@pytest.mark.parametrize("text, amount, percent", [
    ("+5%", 5.0, True), ("5%", 5.0, True), ("+0%", 0.0, True), ("+2048", 2048.0, False), ("+2K", 2048.0, False),
    ("+1MiB", float(1 << 20), False), ("-3%", -3.0, True),
])
def test_limits(text: str, amount: float, percent: bool) -> None:
    lim = parse_limit(text, "--max-arena")
    assert (lim.amount, lim.percent) == (amount, percent)


def test_sqnr_limit_is_always_a_drop() -> None:
    assert parse_limit("-1dB", "--min-sqnr", db=True).allowed(40.0) == 39.0
    assert parse_limit("1dB", "--min-sqnr", db=True).allowed(40.0) == 39.0
    assert parse_limit("+5%", "--max-arena").allowed(1000) == 1050


@pytest.mark.parametrize("text, db", [("5dB", False), ("lots", False), ("+5%", True), ("", False)])
def test_bad_limits_say_how_to_write_them(text: str, db: bool) -> None:
    with pytest.raises(BadInputError, match="is not a limit"):
        parse_limit(text, "--max-arena", db=db)
