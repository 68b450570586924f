"""The `check` step: the whole pre-flight of a model source or a ready .pte/.bpte (what `cmlens check`
prints), and the gate `cmlens run` passes before it builds anything. Lowering is cached, so a check right
before a run costs about a second."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from backend_core.stages.models.sniff import is_program_path
from backend_core.common.errors import BadInputError
from backend_core.common.finding import Finding, group_findings
from backend_core.orchestration.jobs.steps.failed_lowering import lowering_failed
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.analyses.preflight import check_snapshot, findings_of
from backend_core.analyses.preflight.check import PreflightReport, report_memory
from backend_core.analyses.preflight.gate import PreflightError, memory_findings

__all__ = ["PreflightError", "PreflightReport", "gate", "run_preflight"]


def run_preflight(source: str, target: str = "cortex-m55", flow: str = "legacy", *,
                  options: PipelineOptions | None = None,
                  et_root: str | Path | None = None, board: Any = None, use_cache: bool = True,
                  on_status: Callable[[str], None] | None = None, lowered: Any = None) -> PreflightReport:
    """Findings for `source` (zoo name, model file, .pt2, or a .pte/.bpte). `et_root` adds the kernel
    registry of that checkout; `board` (a memory BoardSpec or name) adds the memory fit."""
    p = Path(source)
    rep = PreflightReport(p.name if is_program_path(p) else source, target)
    if is_program_path(p):
        if not p.is_file():
            raise BadInputError(f"Model file {p} does not exist.", "Check the path.")
        program = p.read_bytes()
        final = None
        rep.skipped.append("portable-kernel rules: they read the lowered graph; pass the model source, "
                           "not a .pte/.bpte")
    else:
        res = lowered                  # the job's lower step (it asks for the bundle when check runs)
        if res is None:
            raise BadInputError(f"No lowering of {source} to check.", "Run the check step after the lower step "
                                "(a Job with steps lower, check), as `cmlens check` does.")
        if res.status != "done":
            raise lowering_failed(source, res)
        rep.result = res
        final = res.final
        program = res.blobs["model.bpte"]
        rep.findings.extend(findings_of(final))
        rep.checked.append("portable-kernel dim-order and dtype checks")
    blob_rules = check_snapshot(final, program=program, et_root=et_root)
    have = {(f.node, f.rule, f.source) for f in rep.findings}
    rep.findings.extend(f for f in blob_rules if (f.node, f.rule, f.source) not in have)
    if program[4:8].startswith(b"BP"):
        rep.checked.append("bundled outputs' dim order")
    if et_root is not None:
        rep.checked.append(f"kernel registry of {et_root}")
    else:
        rep.skipped.append("kernel registry: no ExecuTorch checkout given (--et-root)")
    if board is not None:
        rep.findings.extend(report_memory(program, final, board, target, rep))
    else:
        rep.skipped.append("memory fit: no board given (--board)")
    rep.findings.sort(key=lambda f: not f.certain)
    return rep


def gate(source: str, model: Path, options: PipelineOptions, board: Any,
         emit: Callable[[str, str], None], lowered: Any = None) -> list[Finding]:
    """Findings for the model the run is about to build: `lowered` is the lowering it came from (None
    for a ready .pte/.bpte: only the program's own rules apply). Raises PreflightError when one is certain
    to fail."""
    findings: list[Finding] = []
    final = None
    if not is_program_path(source):
        res = lowered                  # the run's own lowering (program_for_run), never a second one
        if res is not None and res.status == "done":
            final = res.final
            findings.extend(res.preflight)
    have = {(f.node, f.rule) for f in findings}
    findings.extend(f for f in check_snapshot(None, program=model.read_bytes()) if (f.node, f.rule) not in have)
    findings.extend(memory_findings(model.read_bytes(), final, board, options.target, emit))
    for g in group_findings(findings):      # one line per rule and op, not one per node
        emit("cmlens", f"pre-flight: {g.line()}")
    if not findings:
        emit("cmlens", "pre-flight: no finding")
    certain = [f for f in findings if f.certain]
    if certain:
        raise PreflightError(certain)
    return findings
