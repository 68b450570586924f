"""Resolve a model source string (zoo name, `file.py[:NAME]`, `file.pt2`) to a LoadedModel."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import BadInputError
from .spec import LoadedModel, ModelSpec
from .zoo import ZOO, zoo_names

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
        "get_example_inputs() (optionally file.py:NAME), or a program saved with torch.export.save (.pt2).")


def load_model(spec: ModelSpec) -> LoadedModel:
    """Import and build the model. For Python files this RUNS the user's code."""
    if spec.kind == "zoo":
        module, inputs, notes = ZOO[spec.name].build()
        return LoadedModel(spec.name, module, inputs, spec, notes=list(notes))
    if spec.kind == "python":
        from .user_file import load_python_model

        return load_python_model(spec)
    from .saved_program import load_pt2

    return load_pt2(spec)
