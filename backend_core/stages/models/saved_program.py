"""Load a float program saved with `torch.export.save` (.pt2)."""
from __future__ import annotations

import traceback

from backend_core.common.errors import BadInputError
from backend_core.stages.models.dependencies import LoadRecorder
from backend_core.stages.models.spec import LoadedModel, ModelSpec


def load_pt2(spec: ModelSpec) -> LoadedModel:
    import torch

    try:
        with LoadRecorder(spec.path) as rec:     # as a .py: its folder on sys.path, its files recorded
            ep = torch.export.load(spec.path)
    except Exception as e:  # corrupt/foreign files are bad input
        raise BadInputError(
            f"{spec.path} is not a readable torch.export program ({type(e).__name__}: {str(e)[:200]}).",
            "Save the float model with torch.export.save(torch.export.export(model, inputs), 'model.pt2'); "
            "the file may be truncated or from an incompatible torch version.",
            detail=traceback.format_exc()) from e
    inputs = None
    if ep.example_inputs is not None:
        args, _kwargs = ep.example_inputs
        inputs = tuple(args)
    if not inputs:
        inputs = tuple(_random_like(n.meta.get("val")) for n in ep.graph.nodes
                       if n.op == "placeholder" and n.name in set(ep.graph_signature.user_inputs))
    module = ep.module(check_guards=False)
    return LoadedModel(spec.name, module, inputs, spec, exported=ep,
                       notes=["loaded from a saved program"], dependencies=rec.dependencies())


def _random_like(val):
    import torch

    if val is None or not hasattr(val, "shape"):
        raise BadInputError("The saved program has an input without shape information.",
                            "Re-export it with example inputs.")
    return torch.randn(tuple(int(s) for s in val.shape)).to(val.dtype)
