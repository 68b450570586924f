"""What the UART parser (uart.py) finds, as plain records: TEST lines, error stats, cycle counters,
ETDump blocks, printed outputs, and the report that gathers them. The outcome of a run is not
decided here: backend_core.target.judge.outcome reads these records."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.target.simulate.faults import FaultReport
from backend_core.target.memory.runner_figures import RunnerMemory


NOT_CYCLE_ACCURATE = "simulator: not cycle-accurate"


@dataclass
class TestResult:
    suite: str       # "BundleIO" (ExecuTorch runner) or "selftest"
    index: int
    passed: bool
    line_no: int


@dataclass
class ErrorStats:
    testset: int
    mean_absolute_error: float | None = None
    max_absolute_error: float | None = None
    mean_relative_error: float | None = None
    max_relative_error: float | None = None
    error: str | None = None   # "=== Error calculating stats ... ERROR:n ===" when stats failed


@dataclass
class CycleReport:
    total: int | None = None
    per_inference: float | None = None
    available: bool = False
    reason: str = ""
    label: str = NOT_CYCLE_ACCURATE
    counters: dict[str, float] = field(default_factory=dict)   # other PMU lines


@dataclass
class EtdumpBlock:
    files: dict[str, bytes] = field(default_factory=dict)   # "etdump.bin" / "debug_buffer.bin" -> bytes
    complete: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def etdump(self) -> bytes | None:
        return self.files.get("etdump.bin")

    @property
    def debug_buffer(self) -> bytes | None:
        return self.files.get("debug_buffer.bin")


@dataclass
class OutputValue:
    output: int
    index: int
    dtype: str
    value: Any


@dataclass
class UartEvent:
    """One parsed line. kind: test, error_stats, cycles, etdump, fault, error, output, memory, log, text."""

    kind: str
    line: str
    line_no: int
    data: Any = None


@dataclass
class UartReport:
    """Everything the parser found so far. What it means (PASS, FAULT, ...) is judge.outcome's to say."""

    tests: list[TestResult] = field(default_factory=list)
    error_stats: list[ErrorStats] = field(default_factory=list)
    cycles: CycleReport | None = None
    etdumps: list[EtdumpBlock] = field(default_factory=list)
    faults: list[FaultReport] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)          # [critical], E/F [executorch...] lines
    outputs: list[OutputValue] = field(default_factory=list)
    model_run_ok: bool | None = None
    sim_time_exceeded: bool = False
    lines: int = 0
    garbage_chars: int = 0
    # the runner's own memory accounting (method_allocator_*, planned buffers, out-of-memory lines)
    memory: RunnerMemory = field(default_factory=RunnerMemory)

    @property
    def passed(self) -> bool | None:
        """True when there are TEST lines and all PASS, False on any FAIL, None without TEST lines."""
        if not self.tests:
            return None
        return all(t.passed for t in self.tests)
