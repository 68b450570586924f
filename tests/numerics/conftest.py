"""Numerics tests run the real pipeline (no mocks). Each model is lowered once per session and
analysed on a few random samples; tests share those results to keep the suite short."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

N_SAMPLES = 3


@dataclass
class Analysed:
    lowered: Any            # backend_core.numerics.run.LoweredStages
    samples: list[tuple]
    result: Any             # NumericsResult


def _analyse(name: str) -> Analysed:
    from backend_core.models import load_model, parse_model_source
    from backend_core.numerics.analyze import analyze
    from backend_core.numerics.inputs import load_samples, parse_inputs
    from backend_core.numerics.run import lower_for_numerics
    from backend_core.pipeline import PipelineOptions

    model = load_model(parse_model_source(name))
    opts = PipelineOptions()
    samples = load_samples(parse_inputs(N_SAMPLES), model.example_inputs, opts.flow)
    lowered = lower_for_numerics(model, opts)
    result = analyze(lowered.stages, lowered.final_snapshot, samples, snapshots=lowered.snapshots,
                     model=name, target=lowered.options.target, flow=opts.flow,
                     inputs=f"{N_SAMPLES} random")
    return Analysed(lowered, samples, result)


@pytest.fixture(scope="session")
def ds_cnn() -> Analysed:
    return _analyse("ds_cnn")


@pytest.fixture(scope="session")
def layernorm_mlp() -> Analysed:
    return _analyse("layernorm_mlp")


@pytest.fixture(params=["ds_cnn", "layernorm_mlp"])
def analysed(request: pytest.FixtureRequest) -> Analysed:
    return request.getfixturevalue(request.param)
