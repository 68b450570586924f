"""What the pre-flight gate of `cmlens run` raises, and the memory-fit findings it adds. The gate itself
(it lowers the model source) is backend_core.orchestration.jobs.steps.preflight.gate: after lowering and the op check,
before the library and runner builds. A finding certain to fail stops the run with exit 2 (nothing is
built, nothing is simulated); "may fail" findings are printed and the run goes on."""
from __future__ import annotations

from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.common.finding import Finding, group_findings


class PreflightError(BadInputError):
    """The program will fail on the target; the findings say where and why (exit 2)."""

    def __init__(self, findings: list[Finding]) -> None:
        first = findings[0]
        where = f" at {first.node}" if first.node else ""
        groups = group_findings(findings)
        more = (f", {len(findings)} finding(s) of {len(groups)} kind(s)" if len(findings) > 1 else "")
        super().__init__(
            f"Pre-flight: this program will fail on the target{where} ({first.op}, {first.rule}{more}). "
            "Nothing was built.",
            f"{first.message}\nfix: {first.fix}\nSee every finding with `cmlens check MODEL`; run anyway with "
            "--skip-preflight.",
            detail="\n".join(g.line() for g in groups))
        self.findings = findings


def memory_findings(program: bytes, final: Any, board: Any, target: str,
                    emit: Callable[[str, str], None]) -> list[Finding]:
    """Memory fit on the run's board (a BoardSpec the run resolved, or a name), when the memory package
    knows that board."""
    if not board:
        return []
    try:
        from backend_core.target.memory import analyze_memory, fit_findings
        from backend_core.common.boards.specs import board_named
        from backend_core.target.build.ops import program_bytes

        spec = board_named(board) if isinstance(board, str) else board
        return fit_findings(analyze_memory(program_bytes(program), final, board=spec, target=target), spec)
    except BadInputError as exc:           # a board the memory tables do not describe
        emit("cmlens", f"pre-flight: memory fit not checked ({exc.message})")
        return []
