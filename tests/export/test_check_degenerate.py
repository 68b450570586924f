"""Issue 44, item 8: `export --check` PASSed on degenerate outputs without a word (ds_cnn with random
weights: a constant input, a ramp and its example input gave identical output bytes). The check firmware
now runs the bundle's reference input and then inputs that exercise the model, and a PASS whose outputs
do not depend on the input, or whose reference output is degenerate by the target verdict's own rule
(pipeline/reference_check.degenerate_reason), is called out. The firmware's UART protocol
(`CMLENS_OUTPUT set index hex`) is what export/check.py's MAIN_C prints; the QEMU run is in
test_user_project_qemu.py (opt-in)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from backend_core.common.boards.table import board_for
from backend_core.target.export.check import MAIN_C, check_inputs_header, judge_check
from backend_core.target.export.exercise import generated_sets
from backend_core.stages.pipeline.reference_check import ADVICE

OUTPUTS = [{"index": 0, "dtype": "float32", "shape": [1, 4], "dim_order": [0, 1], "nbytes": 16,
            "quantization": {"scale": 0.5, "zero_point": 0}}]
INFO = {"pools": {"ram_bytes": 0, "method_allocator": {"bytes": 0}}, "memory": {"model_flash_bytes": 0},
        "io": {"inputs": [{"index": 0, "dtype": "float32", "shape": [1, 4], "dim_order": [0, 1], "nbytes": 16}],
               "outputs": OUTPUTS}}


def _uart(*sets: np.ndarray) -> str:
    lines = ["CMLENS_STATUS 0"]
    for k, y in enumerate(sets):
        lines += ["CMLENS_STATUS 0", f"CMLENS_OUTPUT {k} 0 {y.astype(np.float32).tobytes().hex()}"]
    return "\n".join(lines)


def _judge(expected: np.ndarray, *sets: np.ndarray):
    names = ["the reference input", "constant", "ramp", "reversed ramp"][:len(sets)]
    return judge_check(_uart(*sets), [expected.astype(np.float32)], OUTPUTS, INFO, Path("/nonexistent.elf"),
                       board_for("cortex-m55"), {}, names)


def test_identical_outputs_for_different_inputs_are_called_out() -> None:
    y = np.array([0.5, -1.0, 2.0, 1.5])
    res = _judge(y, y, y, y, y)
    assert res.verdict == "PASS"
    assert "a PASS on degenerate outputs" in res.summary
    (w,) = res.warnings
    assert ("barely depends on the input: 4 different inputs (the reference input, constant, ramp, reversed ramp) "
            "gave identical output bytes") in w
    assert w.endswith(ADVICE) and f"warning: {w}" in res.lines()


def test_one_value_of_twelve_changing_is_still_called_out() -> None:
    """What ds_cnn with random weights does on QEMU: the constant input changes 1 of its 12 output values."""
    y = np.linspace(-1, 1, 12)
    OUT12 = [{**OUTPUTS[0], "shape": [1, 12], "nbytes": 48}]
    moved = y.copy()
    moved[0] = 5.0
    res = judge_check(_uart(y, moved, y), [y.astype(np.float32)], OUT12, INFO, Path("/nonexistent.elf"),
                      board_for("cortex-m55"), {}, ["the reference input", "constant", "ramp"])
    assert res.verdict == "PASS" and "differ in only 1 of 12 values" in res.warnings[0]


def test_a_degenerate_reference_output_is_called_out_by_the_target_verdicts_rule() -> None:
    y = np.zeros(4)
    res = _judge(y, y, np.array([0.5, 0, 0, 0]))
    assert res.verdict == "PASS" and any("all 4 reference outputs are 0" in w for w in res.warnings)


def test_outputs_that_follow_the_input_pass_without_a_warning() -> None:
    y = np.array([0.5, -1.0, 2.0, 1.5])
    res = _judge(y, y, y * 2 + 0.5, y - 0.5)
    assert res.verdict == "PASS" and res.warnings == [] and "degenerate" not in res.summary
    assert res.inputs == ["the reference input", "constant", "ramp"]


def test_a_fail_on_the_reference_input_stays_a_fail() -> None:
    y = np.array([0.5, -1.0, 2.0, 1.5])
    assert _judge(y, y + 0.5, y).verdict == "FAIL"


def test_generated_inputs_differ_and_keep_the_programs_layout() -> None:
    ref = np.linspace(-3, 5, 490, dtype=np.float32).tobytes()
    io = [{"dtype": "float32", "nbytes": len(ref), "shape": [1, 1, 49, 10], "dim_order": [0, 2, 3, 1]}]
    sets = generated_sets([ref], io)
    assert [s.name for s in sets] == ["constant", "ramp", "reversed ramp"]
    values = [np.frombuffer(s.data[0], dtype=np.float32) for s in sets]
    assert all(v.size == 490 for v in values) and len({v.tobytes() for v in values}) == 3
    assert values[1].min() == -3 and values[1].max() == 5
    header = check_inputs_header([[ref]] + [list(s.data) for s in sets], [48])
    assert "#define CHECK_NUM_SETS 4" in header and "check_inputs[CHECK_NUM_SETS][1]" in header
    assert "check_inputs[set]" in MAIN_C
