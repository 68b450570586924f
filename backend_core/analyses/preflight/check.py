"""The report of a whole pre-flight (what `cmlens check` prints) and its memory-fit part. The check of
a model source (it lowers, cached) is backend_core.orchestration.jobs.steps.preflight.run_preflight."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.finding import Finding


@dataclass
class PreflightReport:
    model: str
    target: str
    findings: list[Finding] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)       # which rule families ran
    skipped: list[str] = field(default_factory=list)       # which did not, and why
    result: Any = None                                     # the LoweringResult (None for a .pte/.bpte)

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "target": self.target, "preflight": [f.to_dict() for f in self.findings],
                "checked": self.checked, "skipped": self.skipped}


def report_memory(program: bytes, final: Any, board: Any, target: str, rep: PreflightReport) -> list[Finding]:
    from backend_core.target.memory import analyze_memory, fit_findings
    from backend_core.common.boards.specs import board_named
    from backend_core.target.build.ops import program_bytes

    spec = board_named(board) if isinstance(board, str) else board
    mem = analyze_memory(program_bytes(program), final, board=spec, target=target)
    rep.checked.append(f"memory fit on {spec.name}")
    return fit_findings(mem, spec)
