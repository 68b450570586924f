"""Shared fixtures: each model is lowered once per session with the real ExecuTorch pipeline,
into a private cache so the tests never read results from a developer's cache."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend_core.lowering import LoweringResult, lower
from backend_core.pipeline.stages import PipelineOptions

_RESULTS: dict[tuple[str, str, str], LoweringResult] = {}


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cmlens-cache")
    old = os.environ.get("CMLENS_CACHE")
    os.environ["CMLENS_CACHE"] = str(d)
    yield d
    if old is None:
        os.environ.pop("CMLENS_CACHE", None)
    else:
        os.environ["CMLENS_CACHE"] = old


def lowered(model: str, flow: str = "legacy", target: str = "cortex-m55") -> LoweringResult:
    key = (model, flow, target)
    if key not in _RESULTS:
        _RESULTS[key] = lower(model, PipelineOptions(target=target, flow=flow), use_cache=False,
                              keep_programs=True)
    return _RESULTS[key]


MODELS_FAST = ["ds_cnn", "resnet8", "deep_autoencoder", "layernorm_mlp", "softmax_channels", "maxpool_ceil"]
