"""A run's outcome is decided in one module (backend_core.target.judge.outcome): from the UART, the simulator,
the exit status and the program; the UART records and the simulator's result carry no outcome of their own."""
from __future__ import annotations

from types import SimpleNamespace

from backend_core.target.judge.outcome import classify_outcome, run_outcome, run_problem, simulated_outcome, uart_outcome
from backend_core.target.judge.steps import OutputDifference
from backend_core.target.simulate.simulator import SimResult
from backend_core.target.simulate.uart import parse_uart
from backend_core.target.simulate.uart_records import UartReport

PASS = "I [executorch:arm_executor_runner.cpp:1300 verify_result()] TEST: BundleIO index[0] Test_result: PASS\n"
FAIL = PASS.replace("PASS", "FAIL")


def _sim(text: str, exit_code: int | None = 0, timed_out: bool = False, problem: str = "") -> SimpleNamespace:
    return SimpleNamespace(report=parse_uart(text), exit_code=exit_code, timed_out=timed_out, problem=problem)


def test_the_records_carry_no_outcome() -> None:
    assert not hasattr(UartReport, "outcome") and not hasattr(SimResult, "outcome")


def test_uart_and_simulator_outcomes() -> None:
    assert uart_outcome(parse_uart(PASS)) == "PASS"
    assert uart_outcome(parse_uart(FAIL)) == "FAIL"
    assert uart_outcome(parse_uart("hello\n")) == "NO RESULT"
    assert simulated_outcome(_sim(PASS, timed_out=True)) == "TIMEOUT"


def test_run_outcome_uses_the_exit_status_and_the_program() -> None:
    assert run_outcome(_sim(PASS), ".bpte") == "PASS"
    assert run_outcome(_sim(PASS, exit_code=1), ".bpte") == "FAIL"      # every line said PASS, the firmware did not
    assert run_outcome(_sim("ran\n"), ".pte") == "RAN"                   # a plain .pte: nothing to compare with
    assert run_outcome(_sim("ran\n"), ".bpte") == "NO RESULT"
    assert run_problem(_sim(PASS, problem="why")) == "why"


def test_a_pass_never_hides_a_difference() -> None:
    diff = OutputDifference(0, values=4, differing=1, max_abs=0.5, max_steps=1.0, step=0.5)
    assert classify_outcome("PASS", target_vs_reference=[diff]).outcome == "FAIL"
    assert classify_outcome("PASS", target_vs_reference=[diff], atol=1.0).outcome == "PASS"
