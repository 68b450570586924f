"""Each model is lowered once per session with the real ExecuTorch pipeline,
into a private cache so the tests never read results from a developer's cache."""
from __future__ import annotations

from backend_core.lowering.lower import LowerOutputs, LoweringResult, lower
from backend_core.stages.pipeline.stages import PipelineOptions

_RESULTS: dict[tuple[str, str, str], LoweringResult] = {}


def lowered(model: str, flow: str = "legacy", target: str = "cortex-m55") -> LoweringResult:
    key = (model, flow, target)
    if key not in _RESULTS:
        _RESULTS[key] = lower(model, PipelineOptions(target=target, flow=flow), use_cache=False,
                              outputs=LowerOutputs(edge_program=True))
    return _RESULTS[key]


MODELS_FAST = ["ds_cnn", "resnet8", "deep_autoencoder", "layernorm_mlp", "softmax_channels", "maxpool_ceil"]
