"""What a model source resolves to: the parsed request (ModelSpec) and the loaded model (LoadedModel).

Kept apart from the loaders so user_file / saved_program import these without importing loaded.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from backend_core.stages.models.dependencies import Dependency


@dataclass(frozen=True)
class ModelSpec:
    """What the user asked for, parsed but not loaded (cheap, no torch import)."""

    kind: str            # "zoo" | "python" | "pt2"
    name: str            # display name
    path: str = ""       # absolute path for files
    entry: str = ""      # callable name for python files (":NAME")

    def fingerprint(self) -> str:
        """Identity for caches: zoo name, or the file's kind, path and entry. Not its content: the
        content of the file and of everything it imported or read is in the entry's recorded
        dependencies (LoadedModel.dependencies), checked on every hit, so a miss can say which
        file changed ("helper.py changed")."""
        if self.kind == "zoo":
            return f"zoo:{self.name}"
        return f"{self.kind}:{self.path}:{self.entry}"

    def content_hash(self) -> str:
        """sha256 of the model file ("" for a zoo model): for keys that cannot check recorded files
        afterwards (a sweep's job id); whatever the file imports is checked from the result's
        recorded dependencies (backend_core.stages.models.dependencies)."""
        if self.kind == "zoo" or not self.path:
            return ""
        from backend_core.stages.models.dependencies import file_digest

        return file_digest(self.path)


@dataclass
class LoadedModel:
    """A model ready for export: the eager module (or the saved program) and example inputs."""

    name: str
    module: Any
    example_inputs: tuple
    spec: ModelSpec
    calibration_inputs: list[tuple] | None = None
    exported: Any = None                       # ExportedProgram when loaded from .pt2
    notes: list[str] = field(default_factory=list)
    # Inputs for one flow when they differ from example_inputs: only zoo models (ours) set it,
    # feeding the explicit-layout flow NCHW and the legacy flow channels-last, as ExecuTorch's
    # own Cortex-M tests do. A user's model gets its own inputs, as given, in every flow.
    flow_inputs: dict[str, tuple] = field(default_factory=dict)
    # The files this model was made from (the model file, the modules it imported from outside the
    # standard library / site-packages, the data files it read while loading), with content hashes.
    dependencies: list[Dependency] = field(default_factory=list)
    # Labelled evaluation data (backend_core.analyses.accuracy): a callable yielding (inputs, label) — a model
    # file's get_eval_data(), a zoo entry's held-out split — and the file's preprocess(image) for an
    # image folder (--data). Called only when an evaluation asks, in the process that loaded the model.
    eval_data: Callable[[], Iterable[tuple[Any, Any]]] | None = None
    preprocess: Callable[[Any], Any] | None = None

    def inputs_for(self, flow: str) -> tuple:
        return self.flow_inputs.get(flow, self.example_inputs)
