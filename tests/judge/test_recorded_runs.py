"""Verdicts of recorded real runs (QEMU 7.2, the stock ExecuTorch Arm runner on the kernels/ board
layer, checkout cff6f4dd32e6; tests/fixtures/uart) judged against the very bundle that ran, stored
beside them with its references record (tests/judge/fixtures): what `cmlens run` says, offline."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from backend_core.target.simulate.uart import parse_uart
from backend_core.target.judge import LABEL_QDIFF
from backend_core.target.judge.verdict import judge_run
from backend_core.target.judge.references import read_beside
from backend_core.target.judge.outcome import uart_outcome

UART = Path(__file__).resolve().parents[1] / "fixtures" / "uart"
FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class _Sim:
    report: Any


@dataclass
class _Run:
    """The fields of firmware.run_result.ModelRunResult that the verdict reads."""

    outcome: str
    sim: _Sim
    files: dict = field(default_factory=dict)
    gaps: Any = None
    problem: str = ""


def _judge(uart: str, bpte: Path, **kw):
    from backend_core.stages.pipeline.reference_check import output_steps
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program

    report = parse_uart((UART / uart).read_text())
    program = deserialize_pte_binary(bytes(deserialize_from_flatbuffer_to_bundled_program(bpte.read_bytes()).program)).program
    run = _Run(uart_outcome(report), _Sim(report), **kw)
    return judge_run(run, bpte, read_beside(bpte), output_steps(program), atol=0.0, rtol=0.0, etdump=False)


def test_gelu_conv_on_m55_is_bit_exact_with_a_named_quantisation_difference() -> None:
    """Was FAIL (1-2 output steps) against the fake-quant reference on this correct target (issue 16)."""
    pytest.importorskip("executorch")
    v = _judge("et_runner_gelu_conv_exact_pass_mps3-an547.txt", FIXTURES / "gelu_conv_m55.bpte")
    assert v.outcome == "PASS" and v.label == LABEL_QDIFF and v.exact is True
    [t] = v.target_vs_reference
    assert (t.values, t.differing) == (2048, 0)          # every printed output on the lowered program's grid
    assert v.lines[0] == "target == lowered program bit for bit"
    assert v.lines[1] == ("lowered vs fake-quant: max 2 steps in 4/2048 values "
                          "(conv (quantized_conv2d): local max 1 step(s))")


def test_a_planted_weight_fault_fails_against_the_lowered_program() -> None:
    """ds_cnn for M55 with one weight byte of its last linear flipped after the expected outputs were
    computed (bench/planted_fault.py): the target is one step off in one of 12 outputs. The old check
    (atol 0.01 against fake-quant) PASSed it: max abs error 0.000727."""
    pytest.importorskip("executorch")
    import numpy as np

    intact, faulted = (FIXTURES / "ds_cnn_m55.bpte").read_bytes(), (FIXTURES / "ds_cnn_fault_m55.bpte").read_bytes()
    a, b = np.frombuffer(intact, np.uint8), np.frombuffer(faulted, np.uint8)
    assert list(np.nonzero(a != b)[0]) == [49602]                       # one byte: the planted fault
    v = _judge("et_runner_ds_cnn_planted_fault_fail_mps3-an547.txt", FIXTURES / "ds_cnn_fault_m55.bpte")
    assert v.outcome == "FAIL" and v.exact is False
    [t] = v.target_vs_reference
    assert (t.values, t.differing, round(t.max_steps)) == (12, 1, 1)
    assert v.lines[0].startswith("target != lowered program: max 1 step in 1/12 values: the target computed")
    assert v.lines[1] == "run with --etdump for the first layer that differs"
    report = parse_uart((UART / "et_runner_ds_cnn_planted_fault_fail_mps3-an547.txt").read_text())
    err = report.error_stats[0].max_absolute_error
    assert err == pytest.approx(0.000727, abs=1e-6) and err < 0.01
