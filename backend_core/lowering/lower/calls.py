"""What a caller of `lower()` asks for besides the model and options: the files and live programs it wants
back, and the callbacks it listens with. Value objects, so the one lowering entry takes a few arguments that
say what they are instead of thirteen keywords."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from backend_core.common.errors import Cancelled
from backend_core.common.snapshot.model import GraphSnapshot

StageCallback = Callable[[GraphSnapshot, list[str]], None]


@dataclass(frozen=True)
class LowerOutputs:
    """What the lowering returns beyond its snapshots: `pte`/`bpte` the program files (the bundle with the
    host run's references), `edge_program` a copy of the edge program on `result.pipeline` (reference runs,
    tests), `stages` a private copy of every host-runnable stage (`result.stage_programs`, for the numerics
    step: never cached, they are live objects)."""

    pte: bool = False
    bpte: bool = False
    edge_program: bool = False
    stages: bool = False

    def blobs(self) -> set[str]:
        """The cached files a hit must have to serve this request."""
        return {n for n, w in (("model.pte", self.pte), ("model.bpte", self.bpte),
                               ("references.json", self.bpte)) if w}


@dataclass(frozen=True)
class LowerHooks:
    """Who listens: `on_stage(snapshot, planned stage names)` after each stage, `on_status(text)` for progress
    lines, `on_model(loaded)` once the model is loaded (a step checks its inputs against it before any stage
    runs), `is_cancelled()` True once the user asked to cancel."""

    on_stage: StageCallback | None = None
    on_status: Callable[[str], None] | None = None
    on_model: Callable[[Any], None] | None = None
    is_cancelled: Callable[[], bool] | None = None

    def status(self, text: str) -> None:
        if self.on_status is not None:
            self.on_status(text)

    def cancelled(self) -> bool:
        return self.is_cancelled is not None and self.is_cancelled()

    def cancelling(self) -> LowerHooks:
        """These hooks with a status callback that raises Cancelled once a cancel was asked: the pipeline
        reports status between calibration samples and passes, so a cancel takes effect within a sample,
        not after an 18 s stage."""
        if self.is_cancelled is None:
            return self
        check, inner = self.is_cancelled, self.on_status

        def status(text: str) -> None:
            if check():
                raise Cancelled(f"stopped before: {text}")
            if inner is not None:
                inner(text)
        return LowerHooks(self.on_stage, status, self.on_model, self.is_cancelled)
