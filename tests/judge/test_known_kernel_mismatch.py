"""A FAIL that is ExecuTorch's host reference disagreeing with its own CMSIS-NN kernel, not the user's
model and not a target bug (backend_core/target/judge/kernel_refs.py), judged on a recorded real run:
ExecuTorch's Cortex-M test case avgpool_2x2_pad1 (ops/test_avg_pool2d.py) lowered by `cmlens run
bench/mcu_cases.py:avgpool_2x2_pad1` for cortex-m55, QEMU 7.2 mps3-an547, 2026-12-02 (the bundle that
ran and its references record are stored beside the UART text)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend_core.target.judge.kernel_refs import known_op
from backend_core.target.judge.outcome import LABEL_KNOWN
from tests.judge.test_recorded_runs import FIXTURES, UART, _judge

RUN = "et_runner_avgpool_2x2_pad1_known_mismatch_mps3-an547.txt"
BPTE = FIXTURES / "avgpool_2x2_pad1_m55.bpte"


def test_cmsis_nn_average_rounds_ties_away_from_zero_the_host_to_even() -> None:
    """The emulation of arm_avgpool_s8: a 2x2 window whose mean is x.5 rounds away from zero (what the
    target printed), the host's torch.round(q - zp) to even; odd windows agree."""
    torch = pytest.importorskip("torch")
    from backend_core.target.judge.kernel_refs import cmsis_avgpool_s8

    x = torch.tensor([[[[1, 2], [3, 4]]]], dtype=torch.int8)          # mean 2.5
    assert cmsis_avgpool_s8(x, [2, 2], [2, 2], [0, 0], False).item() == 3
    assert torch.round(torch.tensor(2.5)).item() == 2                   # the host reference's rounding
    assert cmsis_avgpool_s8(-x, [2, 2], [2, 2], [0, 0], False).item() == -3
    # padding 1: the corner window holds one valid cell (no tie), the 2-cell edge windows can tie
    y = torch.tensor([[[[5, 6], [7, 8]]]], dtype=torch.int8)
    out = cmsis_avgpool_s8(y, [2, 2], [2, 2], [1, 1], False)
    assert out.flatten().tolist() == [5, 6, 7, 8]
    z = torch.tensor([[[[0, 1, 2]]]], dtype=torch.int8)                # windows [0] [1, 2] -> 0, 2 (1.5 up)
    assert cmsis_avgpool_s8(z, [1, 2], [1, 2], [0, 1], False).flatten().tolist() == [0, 2]


def test_the_op_names_of_a_lowered_graph_are_recognised() -> None:
    assert known_op("cortex_m.quantized_avg_pool2d.default") == "cortex_m.quantized_avg_pool2d"
    assert known_op("cortex_m.quantized_avg_pool2d_nhwc.default") == "cortex_m.quantized_avg_pool2d_nhwc"
    assert known_op("cortex_m.quantized_max_pool2d.default") is None


def test_a_one_step_avg_pool_difference_fails_as_a_known_reference_mismatch() -> None:
    """Was: "FAIL: target != lowered program: max 1 step in 1/9 values: ... (a target bug)"."""
    pytest.importorskip("executorch")
    v = _judge(RUN, BPTE)
    assert v.outcome == "FAIL" and v.known_difference and v.label == LABEL_KNOWN and v.exact is False
    [t] = v.target_vs_reference
    assert (t.values, t.differing, round(t.max_steps)) == (9, 1, 1)
    assert v.lines[0].startswith("target != lowered program: max 1 step in 1/9 values at "
                                 "cortex_m_quantized_avg_pool2d_default (cortex_m.quantized_avg_pool2d): "
                                 "CMSIS-NN's arm_avgpool_s8 sums the raw int8 window and rounds the average half "
                                 "away from zero")
    assert v.lines[0].endswith("a known reference mismatch, not your model")
    assert "reproduces the target bit for bit (9 values)" in v.lines[1]
    assert "a target bug" not in " ".join(v.lines)
    assert v.to_dict()["known_difference"] is True


def test_without_the_kernel_record_the_same_run_reads_as_a_target_bug(tmp_path: Path) -> None:
    """The same UART and bundle, references record without the known-difference fields (what every
    bundle had before): the verdict cannot tell it from a target bug and says so."""
    pytest.importorskip("executorch")
    refs = json.loads(BPTE.with_name(BPTE.stem + ".references.json").read_text())
    refs.pop("kernel_mismatches"), refs.pop("target_faithful")
    bpte = tmp_path / BPTE.name
    bpte.write_bytes(BPTE.read_bytes())
    bpte.with_name(bpte.stem + ".references.json").write_text(json.dumps(refs))
    v = _judge(RUN, bpte)
    assert v.outcome == "FAIL" and not v.known_difference and v.label == "FAIL"
    assert v.lines[0] == ("target != lowered program: max 1 step in 1/9 values: the target computed something "
                          "other than the program it was given (a target bug)")


def test_a_second_difference_is_not_hidden_by_the_known_one(tmp_path: Path, monkeypatch) -> None:
    """The recorded outputs with one more value moved by a step (output 5, not the tie at 2): the known
    mismatch explains one value, not two: a target bug, with the known op named beside it."""
    pytest.importorskip("executorch")
    text = (UART / RUN).read_text()
    assert "Output[0][5]: (float) 10.974127" in text
    step = json.loads(BPTE.with_name(BPTE.stem + ".references.json").read_text())["steps"][0]
    moved = text.replace("Output[0][5]: (float) 10.974127", f"Output[0][5]: (float) {10.974127 + step:f}")
    uart = tmp_path / "uart"
    uart.mkdir()
    (uart / RUN).write_text(moved)
    monkeypatch.setattr("tests.judge.test_recorded_runs.UART", uart)
    v = _judge(RUN, BPTE)
    assert v.outcome == "FAIL" and not v.known_difference
    assert v.lines[0].endswith("(a target bug)") and "in 2/9 values" in v.lines[0]
    assert v.lines[1].startswith("cortex_m_quantized_avg_pool2d_default (cortex_m.quantized_avg_pool2d) is known to "
                                 "differ from CMSIS-NN on the host (1 step in 1/9 values at")
    assert v.lines[1].endswith("but the target differs beyond that")


def test_a_bundle_that_expects_the_target_kernels_passes_and_names_the_host_difference() -> None:
    """Bundles cmlens makes now expect the lowered program with the known op computed CMSIS-NN's way
    (lowering/references.py::target_expected): a correct target PASSes bit for bit (the runner's own
    check agrees, exit 0), and the PASS says where ExecuTorch's host reference differs and why."""
    from backend_core.target.judge.kernel_refs import OpMismatch
    from backend_core.target.judge.outcome import LABEL_EXACT, classify_outcome
    from backend_core.target.judge.references import LOWERED, References
    from backend_core.target.judge.steps import OutputDifference

    how = "CMSIS-NN rounds ties away from zero"
    m = OpMismatch("cortex_m_quantized_avg_pool2d_default", "cortex_m.quantized_avg_pool2d", 1, 9, 1, how)
    refs = References(LOWERED, [OutputDifference(0, 9, 0, 0.0, 0.1, 0.0)], [0.1],
                      kernel_mismatches=[m.to_dict()], target_kernels=True)
    refs = References.from_dict(refs.to_dict())                  # as read back from references.json
    v = classify_outcome("PASS", refs, target_vs_reference=[OutputDifference(0, 9, 0, 0.0, 0.1, 0.0)])
    assert v.outcome == "PASS" and v.label == LABEL_EXACT and v.exact is True and v.known_difference
    assert v.lines[0] == "target == lowered program bit for bit"
    assert v.lines[1].startswith("the lowered program's cortex_m_quantized_avg_pool2d_default "
                                 "(cortex_m.quantized_avg_pool2d) computed as the target's CMSIS-NN kernel does: "
                                 + how)
    assert "1 step in 1/9 values" in v.lines[1] and v.lines[1].endswith("not your model and not the target")
    plain = classify_outcome("PASS", References(LOWERED, [OutputDifference(0, 9, 0, 0.0, 0.1, 0.0)], [0.1]),
                             target_vs_reference=[OutputDifference(0, 9, 0, 0.0, 0.1, 0.0)])
    assert not plain.known_difference and len(plain.lines) == 2
