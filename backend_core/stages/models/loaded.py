"""Resolve a model source string (zoo name, `file.py[:NAME]`, `file.pt2`) to a LoadedModel."""
from __future__ import annotations

import os
from pathlib import Path

from backend_core.stages.models.sniff import is_artefact_path
from backend_core.common.errors import BadInputError
from backend_core.stages.models.spec import LoadedModel, ModelSpec
from backend_core.stages.models.zoo import ZOO, explicit_flow_inputs, zoo_names

__all__ = ["LoadedModel", "ModelSpec", "load_model", "parse_model_source"]


def parse_model_source(source: str) -> ModelSpec:
    """Parse without loading: validates names and paths so errors come before the 8 s import."""
    source = source.strip()
    if not source:
        raise BadInputError("No model given.", "Pass a zoo name (" + ", ".join(zoo_names()) +
                            "), a .py file or a .pt2 file.")
    if source in ZOO:
        return ModelSpec("zoo", source)
    path_part, entry = source, ""
    if ":" in source and not os.path.exists(source):
        head, _, tail = source.rpartition(":")
        if head.endswith(".py") and tail.isidentifier():
            path_part, entry = head, tail
    if is_artefact_path(source) or _sniffs_as_artefact(source):
        # .pte / .bpte / .etrecord / .etdump: read by backend_core.lowering.artefacts, not lowered
        p = Path(source).expanduser().resolve()
        if not p.is_file():
            raise BadInputError(f"File not found: {p}",
                                "Check the path; relative paths are taken from the current folder.")
        return ModelSpec("artefact", p.name, str(p))
    if path_part.endswith(".py") or path_part.endswith(".pt2"):
        p = Path(path_part).expanduser().resolve()
        if not p.is_file():
            raise BadInputError(f"Model file not found: {p}",
                                "Check the path; relative paths are taken from the current folder.")
        kind = "python" if p.suffix == ".py" else "pt2"
        name = p.stem + (f":{entry}" if entry else "")
        return ModelSpec(kind, name, str(p), entry)
    raise BadInputError(
        f"Unknown model {source!r}.",
        "Use a zoo name (" + ", ".join(zoo_names()) + "), a Python file defining get_model() and "
        "get_example_inputs() (optionally file.py:NAME), a program saved with torch.export.save (.pt2), "
        "or an ExecuTorch artefact to read (.pte, .bpte, .etrecord, .etdump).")


def _sniffs_as_artefact(source: str) -> bool:
    """An existing file of another suffix (`etdump.bin`, `etrecord.bin`) whose first bytes say ExecuTorch."""
    if source.endswith((".py", ".pt2")) or not os.path.isfile(source):
        return False
    from backend_core.stages.models.sniff import sniff_bytes

    try:
        with open(source, "rb") as fh:
            sniff_bytes(fh.read(64), source)
        return True
    except (OSError, BadInputError):
        return False


def load_model(spec: ModelSpec) -> LoadedModel:
    """Import and build the model. For Python files this RUNS the user's code."""
    if spec.kind == "zoo":
        entry = ZOO[spec.name]
        module, inputs, notes = entry.build()
        deps = []
        if entry.weights:       # trained weights: a retrained file is a cache miss that names it
            from backend_core.stages.models.dependencies import Dependency, file_digest

            w = Path(__file__).resolve().parent / entry.weights
            deps.append(Dependency(str(w), entry.weights, "data", file_digest(w)))
        return LoadedModel(spec.name, module, inputs, spec, notes=list(notes),
                           calibration_inputs=entry.calibration() if entry.calibration else None,
                           flow_inputs={"explicit": explicit_flow_inputs(inputs)}, dependencies=deps,
                           eval_data=entry.eval_data)
    if spec.kind == "artefact":
        raise BadInputError(f"{spec.name} is an ExecuTorch artefact: it holds the lowered program, not the "
                            "float model this needs.",
                            "Give the model source (zoo name, .py or .pt2) for this; open the artefact with "
                            "cmlens lower/gui/check/memory.")
    if spec.kind == "python":
        from backend_core.stages.models.user_file import load_python_model

        return load_python_model(spec)
    from backend_core.stages.models.saved_program import load_pt2

    return load_pt2(spec)
