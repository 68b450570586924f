"""What a lowering returns (LoweringResult), and which ops AtenToCortexMPass rewrites.

A module of its own so the artefact readers can produce the same result type without importing the
lowering pipeline (backend_core.lowering.lower dispatches artefact files to them: no import cycle)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.stages.pipeline import LoweringPipeline, PipelineOptions
from backend_core.analyses.preflight import Finding, findings_of
from backend_core.analyses.report.json_report import ReportSubject, build_report
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.common.versions import stack_versions

__all__ = ["LoweringResult", "supported_targets"]


@dataclass
class LoweringResult:
    model: str
    source: str
    options: PipelineOptions
    status: str                                   # done | failed | cancelled
    snapshots: list[GraphSnapshot]
    verdicts: dict[str, Any]
    planned_stages: list[str]
    error: dict[str, Any] | None = None
    from_cache: bool = False
    seconds: float = 0.0
    blobs: dict[str, bytes] = field(default_factory=dict)   # "model.pte"/"model.bpte" bytes
    pipeline: LoweringPipeline | None = None                # live objects (not after a cache hit)
    verify_suggestions: bool = False                        # fixes were tried by re-lowering
    dependencies: list[dict[str, str]] = field(default_factory=list)   # files it was made from: Dependency.to_dict()
    cache_note: str = ""                                    # why a cached entry was not used: "helper.py changed"
    stage_programs: list[Any] | None = None                 # keep_stages: host-runnable copies (numerics)
    loaded_model: Any = None                                # keep_stages: the LoadedModel it was made from

    @property
    def final(self) -> GraphSnapshot | None:
        return self.snapshots[-1] if self.snapshots and self.snapshots[-1].kind == "final" else None

    @property
    def preflight(self) -> list[Finding]:
        """Pre-flight findings on the final program (backend_core.analyses.preflight)."""
        return findings_of(self.final)

    def fallbacks(self) -> list[NodeSnapshot]:
        f = self.final
        return f.fallbacks() if f else []

    def report(self, files: dict[str, str] | None = None, *, with_graphs: bool = True) -> dict[str, Any]:
        return build_report(ReportSubject(self.model, self.source, self.options.target, self.options.flow, self.status,
                                          list(self.snapshots), self.verdicts, self.error, self.planned_stages,
                                          {"channels_last": self.options.channels_last,
                                           "keep_going": self.options.keep_going,
                                           "rewrites": list(self.options.rewrites),
                                           "verify_suggestions": self.verify_suggestions,
                                           "activations": self.options.activations, "calib": self.options.calib}),
                            versions=stack_versions(), files=files, with_graphs=with_graphs)


def supported_targets() -> frozenset[str]:
    """Targets AtenToCortexMPass has a substitution for, spelled as in snapshots."""
    from executorch.backends.cortex_m.passes.aten_to_cortex_m_pass import AtenToCortexMPass

    from backend_core.common.snapshot.capture import target_name

    return frozenset(target_name(t) for t in AtenToCortexMPass._DIALECT_SUBSTITUTIONS)
