"""An artefact through the lowering entry: `lower("model.pte")` reads it (no lowering) and returns a
LoweringResult whose stages are the artefact's snapshots, so every caller of lower() (the CLI's
lower/check/memory, the GUI's worker) accepts a .pte, .bpte, .etrecord or .etdump unchanged."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from backend_core.lowering.result import LoweringResult
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.lowering.artefacts.open import open_artefact
from backend_core.lowering.artefacts.result import ArtefactResult

ARTEFACT_FLOW = "artefact"


@dataclass
class ArtefactLowering(LoweringResult):
    """A LoweringResult read from an artefact; `artefact` keeps what only an artefact has."""

    artefact: ArtefactResult | None = None

    def report(self, files: dict[str, str] | None = None, *, with_graphs: bool = True) -> dict[str, Any]:
        assert self.artefact is not None
        rep = self.artefact.report(with_graphs=with_graphs)
        rep["files"] = files or {}
        return rep


def lower_artefact(source: str, path: str, options: PipelineOptions, *,
                   on_stage: Callable[[Any, list[str]], None] | None = None,
                   on_status: Callable[[str], None] | None = None, use_cache: bool = True,
                   companions: dict[str, Any] | None = None) -> ArtefactLowering:
    stages: list[Any] = []
    res = open_artefact(path, use_cache=use_cache, on_status=on_status, on_stage=stages.append,
                        **(companions or {}))
    planned = [s.stage for s in res.snapshots]
    for s in stages:
        if on_stage:
            on_stage(s, planned)
    blobs = {"model.pte": res.program} if res.program else {}
    if res.kind == "bpte":
        blobs["model.bpte"] = open(path, "rb").read()
    opts = replace(options, flow=ARTEFACT_FLOW)
    return ArtefactLowering(res.name, source, opts, "done", list(res.snapshots), {}, planned,
                            from_cache=res.from_cache, seconds=res.seconds, blobs=blobs, artefact=res)
