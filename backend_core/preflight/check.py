"""The whole pre-flight for a model source or a ready .pte/.bpte: what `cmlens check` prints and what
`cmlens run` consults before it builds anything. Lowering is cached, so a check right before a run
costs about a second."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import BadInputError
from .finding import Finding
from . import check_snapshot, findings_of


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


def run_preflight(source: str, target: str = "cortex-m55", flow: str = "legacy", *,
                  et_root: str | Path | None = None, board: Any = None, use_cache: bool = True,
                  on_status: Callable[[str], None] | None = None) -> PreflightReport:
    """Findings for `source` (zoo name, model file, .pt2, or a .pte/.bpte). `et_root` adds the kernel
    registry of that checkout; `board` (a memory BoardSpec or name) adds the memory fit."""
    p = Path(source)
    rep = PreflightReport(p.name if p.suffix in (".pte", ".bpte") else source, target)
    if p.suffix in (".pte", ".bpte"):
        if not p.is_file():
            raise BadInputError(f"Model file {p} does not exist.", "Check the path.")
        program = p.read_bytes()
        final = None
        rep.skipped.append("portable-kernel rules: they read the lowered graph; pass the model source, "
                           "not a .pte/.bpte")
    else:
        from ..lowering import lower
        from ..pipeline.stages import PipelineOptions

        res = lower(source, PipelineOptions(target=target, flow=flow), use_cache=use_cache, want_pte=True,
                    want_bpte=True, on_status=on_status)
        if res.status != "done":
            err = res.error or {}
            raise BadInputError(f"Lowering {source} failed at {err.get('stage', '?')}: "
                                f"{err.get('message', res.status)}", err.get("hint", ""))
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
        rep.findings.extend(_memory(program, final, board, target, rep))
    else:
        rep.skipped.append("memory fit: no board given (--board)")
    rep.findings.sort(key=lambda f: not f.certain)
    return rep


def _memory(program: bytes, final: Any, board: Any, target: str, rep: PreflightReport) -> list[Finding]:
    from ..memory import analyze_memory, board_named, fit_findings
    from ..firmware.et_ops import program_bytes

    spec = board_named(board) if isinstance(board, str) else board
    mem = analyze_memory(program_bytes(program), final, board=spec, target=target)
    rep.checked.append(f"memory fit on {spec.name}")
    return fit_findings(mem, spec)
