"""What one run of a model on a board gave: the outcome, the simulator's report, the op check, timings,
files, and what later steps attached (per-layer gaps, profile, memory check). Data only: the job that
produces it is backend_core.orchestration.jobs.target_run.run_on_target."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.common.boards.table import Board
from backend_core.target.build.ops import OpCheck
from backend_core.target.simulate.simulator import SimResult
from backend_core.target.simulate.uart_records import NOT_CYCLE_ACCURATE


class MissingOpsError(BadInputError):
    """The model needs operators the checkout has no kernels for (exit 2)."""

    def __init__(self, check: OpCheck) -> None:
        super().__init__(check.summary() + ".", check.hint())
        self.check = check


@dataclass
class ModelRunResult:
    model: str
    target: str
    board: Board
    outcome: str                      # PASS / FAIL / FAULT / TIMEOUT / NO RESULT
    exit_code: int | None
    op_check: OpCheck
    sim: SimResult
    elf: Path
    timings: dict[str, float] = field(default_factory=dict)   # lower_s, libs_s, runner_*_s, run_s
    libs_cached: bool = False
    cold_library_build_s: float | None = None
    problem: str = ""
    files: dict[str, Path] = field(default_factory=dict)    # semihosting: out-0.bin, etdump.bin, ...
    gaps: Any = None                  # gaps.GapReport when --etdump ran a lowered model (ETRecord + debug buffer)
    gaps_problem: str = ""            # why there are no gaps although --etdump was asked for
    profile: Any = None               # profile.Profile with --profile
    profile_problem: str = ""         # why there is no profile although --profile was asked for
    memory: dict[str, Any] | None = None   # prediction vs the runner's memory lines (memory/target_check.py)
    reference_warnings: list[str] = field(default_factory=list)   # degenerate expected outputs (reference_check)
    verdict: Any = None               # verdict.Verdict: the outcome against the lowered program + fake-quant

    @property
    def passed(self) -> bool:
        """PASS (or RAN for a .pte without reference outputs) and exit status 0."""
        return self.outcome in ("PASS", "RAN") and self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        r = self.sim.report
        cycles = r.cycles
        return {
            "model": self.model, "target": self.target, "board": self.board.name,
            "simulator": self.board.simulator, "outcome": self.outcome, "exit_code": self.exit_code,
            "problem": self.problem,
            "tests": [{"suite": t.suite, "index": t.index, "passed": t.passed} for t in r.tests],
            "error_stats": [vars(s) for s in r.error_stats],
            "cycles": None if cycles is None else {
                "available": cycles.available, "total": cycles.total, "per_inference": cycles.per_inference,
                "label": NOT_CYCLE_ACCURATE, "reason": cycles.reason, "counters": cycles.counters},
            "etdump": [{k: len(v) for k, v in b.files.items()} for b in r.etdumps],
            "faults": [f.summary() for f in r.faults],
            "errors": r.errors,
            "outputs": len(r.outputs),
            "ops": {"model": self.op_check.model_ops, "missing": self.op_check.missing},
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "libraries_cached": self.libs_cached, "cold_library_build_s": self.cold_library_build_s,
            "memory": self.memory,
            "reference_warnings": self.reference_warnings,
            "elf": str(self.elf), "files": {k: str(v) for k, v in self.files.items()},
            "gaps": None if self.gaps is None else self.gaps.to_dict(), "gaps_problem": self.gaps_problem,
            "profile": None if self.profile is None else self.profile.to_dict(),
            "profile_problem": self.profile_problem,
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
        }

    def summary(self) -> str:
        r = self.sim.report
        label = self.verdict.label if self.verdict is not None else self.outcome
        lines = [f"{self.model} on {self.board.name} ({self.target}, {self.board.simulator}): {label}, "
                 f"exit status {self.exit_code}"]
        if self.verdict is not None:
            lines += [f"verdict: {x}" for x in self.verdict.lines]
            lines += [f"kernel mismatch: {x}" for x in self.verdict.kernel_mismatches]
        for s in r.error_stats:
            lines.append(f"error stats testset {s.testset}: mean abs {s.mean_absolute_error}, max abs "
                         f"{s.max_absolute_error}, mean rel {s.mean_relative_error}, max rel {s.max_relative_error}")
        if r.cycles is not None and r.cycles.available:
            lines.append(f"cycles: {r.cycles.total} ({NOT_CYCLE_ACCURATE})")
        else:
            lines.append(f"cycles: unavailable on {self.board.simulator} ({NOT_CYCLE_ACCURATE} anyway)")
        if r.etdumps:
            lines.append("etdump: " + ", ".join(f"{k} {len(v)} B" for b in r.etdumps for k, v in b.files.items()))
        if self.files:
            lines.append("files: " + ", ".join(f"{p} ({p.stat().st_size} B)" for p in self.files.values()
                                               if p.is_file()))
        if self.gaps is not None:
            lines.append(self.gaps.table(10))
        elif self.gaps_problem:
            lines.append(f"per-layer gaps: none ({self.gaps_problem})")
        if self.profile is not None:
            from backend_core.target.profile import profile_table
            lines.append(profile_table(self.profile))
        elif self.profile_problem:
            lines.append(f"per-op profile: none ({self.profile_problem})")
        if self.memory and self.memory["lines"]:
            lines += ["memory: prediction vs the runner's own figures"] + ["  " + x for x in self.memory["lines"]]
        if self.problem:
            lines.append(f"problem: {self.problem}")
        lines += [f"warning: {w}" for w in self.reference_warnings]
        t = self.timings
        lines.append("time: " + ", ".join(f"{k[:-2]} {v:.2f} s" for k, v in t.items())
                     + (" (libraries cached)" if self.libs_cached else ""))
        return "\n".join(lines)
