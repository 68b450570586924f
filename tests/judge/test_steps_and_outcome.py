"""The verdict's words and outcomes on plain data: PASS means bit-exact against the lowered program,
the fake-quant distance is reported beside it in output steps, a target that differs FAILs with the
first layer that differs, and a tolerance the user asked for never passes for bit-exact."""
from __future__ import annotations

import numpy as np
import pytest

from backend_core.target.judge import (LABEL_EXACT, LABEL_QDIFF, LABEL_TOLERANCE, LOWERED, UNKNOWN, OutputDifference, References,
                                       Verdict, classify_outcome, compare, summary)
from backend_core.target.judge.target_outputs import compare_printed, printed_outputs

STEP = 0.014587787          # gelu_conv's output step on M55


def test_differences_are_counted_in_output_steps() -> None:
    ref = np.arange(2048, dtype=np.float32) * np.float32(STEP)
    got = ref.copy()
    got[[5, 6, 100, 2000]] += np.float32(STEP)
    got[6] += np.float32(STEP)
    d = compare(got, ref, STEP)
    assert (d.values, d.differing) == (2048, 4) and d.max_steps == pytest.approx(2.0, abs=1e-3)
    assert d.text() == "max 2 steps in 4/2048 values"
    assert compare(ref, ref, STEP).text() == "bit for bit (2048 values)"
    assert summary([compare(ref, ref, STEP)]) == "bit for bit"
    assert compare(ref[:10], ref, STEP).shape_mismatch == "(10,) vs (2048,)"
    assert compare(np.float32([0.5, 0.25]), np.float32([0.5, 0.75])).text() == "max |d| 0.5 in 1/2 values"


def test_printed_outputs_are_compared_on_the_integer_grid() -> None:
    """`%f` keeps 6 decimals: a value printed from the exact expected one is still bit-exact."""
    class V:
        def __init__(self, o: int, i: int, v: str) -> None:
            self.output, self.index, self.value = o, i, v

    exact = np.array([-116, -50, 0, 12, 127], dtype=np.float32)
    expected = (exact + 116) * np.float32(STEP)
    [printed] = printed_outputs([V(0, i, f"{x:f}") for i, x in enumerate(expected)])
    assert compare_printed(printed, expected, STEP).identical
    printed[3] += STEP
    d = compare_printed(printed, expected, STEP)
    assert (d.differing, d.max_steps) == (1, 1.0)


def _refs(diff: bool) -> References:
    fq = [OutputDifference(0, 2048, 4 if diff else 0, 2 * STEP if diff else 0.0, STEP, 2.0 if diff else 0.0)]
    return References(LOWERED, fq, [STEP], ["conv (quantized_conv2d): local max 1 step(s)"] if diff else [])


def test_pass_is_bit_exact_and_names_the_quantisation_difference() -> None:
    v = classify_outcome("PASS", _refs(True), max_abs_error=0.0)
    assert v.outcome == "PASS" and v.exact is True and v.label == LABEL_QDIFF
    assert v.lines == ["target == lowered program bit for bit",
                       "lowered vs fake-quant: max 2 steps in 4/2048 values "
                       "(conv (quantized_conv2d): local max 1 step(s))"]
    assert v.headline() == "PASS with a quantisation difference: target == lowered program bit for bit"
    plain = classify_outcome("PASS", _refs(False), max_abs_error=0.0)
    assert plain.label == LABEL_EXACT and plain.lines[1] == "lowered vs fake-quant: bit for bit"
    assert Verdict.from_dict(v.to_dict()).to_dict() == v.to_dict()       # the GUI rebuilds it from JSON


def test_a_target_that_differs_fails_with_its_first_layer() -> None:
    gaps = {"layers": [{"node_id": "conv", "target": "cortex_m.quantized_conv2d.default", "mismatched": 0,
                        "numel": 512, "max_abs": 0.0, "scale": 0.01},
                       {"node_id": "fc", "target": "cortex_m.quantized_linear.default", "mismatched": 1,
                        "numel": 12, "max_abs": 1.0, "scale": 0.0007}]}
    diff = [OutputDifference(0, 12, 1, 0.000727, 0.000727, 1.0)]
    v = classify_outcome("FAIL", _refs(False), target_vs_reference=diff, gaps=gaps, etdump=True)
    assert v.outcome == "FAIL" and v.exact is False
    assert v.lines[0].startswith("target != lowered program: max 1 step in 1/12 values: the target computed")
    assert v.lines[1] == ("first layer that differs (execution order): fc (cortex_m.quantized_linear): "
                          "max 1 step(s) in 1/12 values")
    assert v.kernel_mismatches and v.kernel_mismatches[0].startswith("cortex_m.quantized_linear (fc)")
    no_dump = classify_outcome("FAIL", _refs(False), max_abs_error=STEP)
    assert no_dump.lines[0].startswith("target != lowered program: max 1 step (count not reported")
    assert no_dump.lines[1] == "run with --etdump for the first layer that differs"


def _float_layer_gaps(max_abs: float, snr_db: float) -> dict:
    """FPN on QEMU M55 (issue 38): the first layer that differs is the float copy after a portable group
    norm, 350 of 512 values by at most 4.7e-10; one int8 output value then lands one step apart."""
    return {"layers": [{"node_id": "conv", "target": "cortex_m.quantized_conv2d.default", "mismatched": 0,
                        "numel": 512, "max_abs": 0.0, "scale": 0.01, "dtype": "torch.int8"},
                       {"node_id": "dim_order_ops__clone_dim_order_default_3",
                        "target": "dim_order_ops._clone_dim_order.default", "mismatched": 350, "numel": 512,
                        "max_abs": max_abs, "scale": None, "dtype": "torch.float32", "snr_db": snr_db}]}


def test_float_rounding_in_a_float_layer_is_not_called_a_target_bug() -> None:
    diff = [OutputDifference(0, 12288, 1, STEP, STEP, 1.0)]
    v = classify_outcome("FAIL", _refs(False), target_vs_reference=diff,
                         gaps=_float_layer_gaps(4.7e-10, 176.0), etdump=True)
    assert v.outcome == "FAIL" and v.exact is False
    assert "(a target bug)" not in v.lines[0]
    assert "float rounding, not a target bug" in v.lines[0] and "176 dB" in v.lines[0]
    assert "-ffp-contract=off" in v.lines[0]
    assert v.first_differing_layer.float_rounding and not v.kernel_mismatches
    noted = _refs(False)
    noted.notes.append("the expected outputs compute the program's 17 float portable op(s) with ExecuTorch's "
                       "portable kernels")
    assert classify_outcome("PASS", noted, max_abs_error=0.0).lines[-1].startswith(
        "reference: the expected outputs compute the program's 17 float portable op(s)")
    assert Verdict.from_dict(v.to_dict()).lines == v.lines
    # a float layer that is wrong (a kernel reading the wrong values) stays a target bug
    wrong = classify_outcome("FAIL", _refs(False), target_vs_reference=diff,
                             gaps=_float_layer_gaps(0.8, 12.0), etdump=True)
    assert wrong.lines[0].endswith("(a target bug)") and wrong.kernel_mismatches


def test_a_tolerance_does_not_pass_for_bit_exact() -> None:
    diff = [OutputDifference(0, 12, 3, 0.0015, 0.000727, 2.06)]
    v = classify_outcome("PASS", _refs(False), target_vs_reference=diff, atol=0.01, rtol=0.01)
    assert v.label == LABEL_TOLERANCE and v.exact is False
    assert v.lines[0] == "target vs lowered program: max 2.06 steps in 3/12 values, accepted by atol 0.01 rtol 0.01"
    same = classify_outcome("PASS", _refs(False), target_vs_reference=[OutputDifference(0, 12, 0, 0.0)], atol=0.01)
    assert same.label == LABEL_EXACT and same.exact is True


def test_a_bundle_cmlens_did_not_make_says_so() -> None:
    v = classify_outcome("PASS", References(UNKNOWN), max_abs_error=0.0)
    assert v.outcome == "PASS" and v.lines[-1].startswith("the expected outputs are the bundle's expected outputs")
    f = classify_outcome("FAIL", References(UNKNOWN), max_abs_error=0.03)
    assert "may be quantisation, not the target" in f.lines[0]


@pytest.mark.parametrize("outcome", ["FAULT", "TIMEOUT", "NO RESULT"])
def test_fault_and_timeout_keep_their_outcome(outcome: str) -> None:
    v = classify_outcome(outcome, _refs(True), problem="the firmware did not finish in 5 s")
    assert (v.outcome, v.label, v.exact) == (outcome, outcome, None)
    assert v.lines[0] == "the firmware did not finish in 5 s"
