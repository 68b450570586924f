"""Build and run the kernels/ self-test firmware (no ExecuTorch needed): the quickest check that the
toolchain, the board layer and the simulator work for a CPU."""
from __future__ import annotations

import re
import threading
from typing import Callable
from dataclasses import dataclass, field
from pathlib import Path

from backend_core.common.boards.table import Board, board_for
from backend_core.target.build.kernels import BuildRequest, BuildResult, KernelBuilder
from backend_core.target.simulate.faults import FaultReport
from backend_core.target.toolchain.process import LineCallback
from backend_core.target.judge.outcome import run_outcome
from backend_core.target.simulate.simulator import EventCallback, runner_for, tick_unit
from backend_core.target.simulate.uart_records import CycleReport, TestResult

# Firmware variants of kernels/selftest (CMake target names).
VARIANTS: dict[str, str] = {
    "selftest": "cmlens_selftest",
    "selftest-fail": "cmlens_selftest_fail",   # one known answer corrupted: must report FAIL
    "hang": "cmlens_hang",                     # never exits: the time limit must stop it
    "fault": "cmlens_fault",                   # BusFault: reads an unmapped address
    "fault-udf": "cmlens_fault_udf",           # UsageFault: undefined instruction
}


@dataclass
class SelftestResult:
    """Outcome of one self-test run, with the build and run numbers."""

    target: str
    board: Board
    variant: str
    outcome: str                     # PASS / FAIL / FAULT / TIMEOUT / NO RESULT
    exit_code: int | None
    tests: list[TestResult]
    cycles: CycleReport | None
    fault: FaultReport | None
    problem: str
    elf: Path
    configure_s: float
    build_s: float
    run_s: float
    uart: list[str] = field(default_factory=list)
    tick_unit: str = ""              # what `ticks` count (simulator.tick_unit)

    @property
    def ticks(self) -> dict[str, int]:
        """Tick counts of the firmware's fixed workloads, e.g. {"1x": 8000068, "2x": 16000073}."""
        return workload_ticks(self.uart)

    @property
    def passed(self) -> bool:
        """PASS lines only, at least one, and exit status 0."""
        return self.outcome == "PASS" and self.exit_code == 0

    def summary(self) -> str:
        """A few lines for the console."""
        n_pass = sum(t.passed for t in self.tests)
        lines = [f"{self.variant} on {self.board.name} ({self.target}, {self.board.simulator}): {self.outcome}"
                 f" - {n_pass}/{len(self.tests)} tests passed, exit status {self.exit_code}"]
        if self.cycles is not None:
            if self.cycles.available:
                lines.append(f"cycles: {self.cycles.total} ({self.cycles.label})")
            else:
                lines.append(f"cycles: unavailable ({self.cycles.reason})")
        if self.ticks:
            counts = ", ".join(f"{k} {v:,}" for k, v in self.ticks.items())
            lines.append(f"workload ticks: {counts} ({self.tick_unit})")
        if self.problem:
            lines.append(f"problem: {self.problem}")
        if self.fault is not None and self.fault.flags:
            regs = " ".join(f"{k}=0x{v:08x}" for k, v in self.fault.registers.items()
                            if k in ("cfsr", "hfsr", "bfar", "mmfar", "pc", "lr"))
            lines.append(f"fault registers: {regs} [{', '.join(self.fault.flags)}]")
        lines.append(f"build {self.configure_s + self.build_s:.1f} s (configure {self.configure_s:.1f} s), "
                     f"run {self.run_s:.2f} s; firmware {self.elf}")
        return "\n".join(lines)


_TICKS = re.compile(r"^ticks: workload\[(\w+)\] iterations=\d+ ticks=(\d+)$")


def workload_ticks(uart: list[str]) -> dict[str, int]:
    """The self-test's `ticks: workload[1x] iterations=N ticks=T` lines as {"1x": T, ...}."""
    return {m.group(1): int(m.group(2)) for m in map(_TICKS.match, uart) if m}


def run_selftest(target: str = "cortex-m55", sim: str = "qemu", timeout: float = 30.0, *,
                 variant: str = "selftest", build_root: Path | None = None,
                 on_line: LineCallback | None = None, on_event: EventCallback | None = None,
                 cancel_event: threading.Event | None = None, build: BuildResult | None = None,
                 on_step: Callable[[str], None] | None = None, icount: bool = False) -> SelftestResult:
    """Build (incrementally) and run a self-test firmware for `target` on `sim`.

    icount=True runs QEMU with `-icount`: the workload tick counts are then instructions executed.

    Raises UnsupportedTargetError / ToolMissingError (exit 2), BuildError / SimulatorError (exit 3),
    Cancelled. A FAIL, fault or hang is a result, not an exception. `on_step(name)`: each of
    backend_core.common.protocol.SELFTEST_STEPS as it begins."""
    step = on_step or (lambda name: None)
    if variant not in VARIANTS:
        raise ValueError(f"unknown self-test variant {variant!r}; known: {', '.join(VARIANTS)}")
    board = board_for(target, sim)
    fw = VARIANTS[variant]
    cancel_event = cancel_event or threading.Event()
    runner = runner_for(board, on_line=on_line, on_event=on_event, cancel_event=cancel_event, icount=icount)
    runner.require()  # a missing simulator is reported before a build that could not be run anyway
    step("build runner")
    if build is None or fw not in build.elfs:
        req = BuildRequest(board, (fw,), build_root=build_root)
        build = KernelBuilder(req, on_line=on_line, cancel_event=cancel_event).run()
    elf = build.elfs[fw]
    if on_line:
        on_line("cmlens", f"$ {' '.join(runner.command(elf))}")
    step("run")
    result = runner.run(elf, timeout=timeout)
    return SelftestResult(
        target=board.cpu, board=board, variant=variant, outcome=run_outcome(result), exit_code=result.exit_code,
        tests=result.report.tests, cycles=result.report.cycles,
        fault=result.report.faults[0] if result.report.faults else None, problem=result.problem, elf=elf,
        configure_s=build.configure_s, build_s=build.build_s, run_s=result.elapsed_s, uart=result.uart,
        tick_unit=tick_unit(board, icount))
