"""Numerics tests run the real pipeline (no mocks). Each model is lowered once per session and
analysed on a few random samples; tests share those results to keep the suite short."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

N_SAMPLES = 3


@dataclass
class Analysed:
    lowered: Any            # tests.helpers.numerics_job.lowered_stages
    samples: list[tuple]
    result: Any             # NumericsResult


def _analyse(name: str) -> Analysed:
    from tests.helpers.numerics_job import lowered_stages, numerics_job

    res = numerics_job(name, N_SAMPLES)
    return Analysed(lowered_stages(res), res.numerics_inputs.samples, res.numerics)


@pytest.fixture(scope="session")
def ds_cnn() -> Analysed:
    return _analyse("ds_cnn")


@pytest.fixture(scope="session")
def layernorm_mlp() -> Analysed:
    return _analyse("layernorm_mlp")


@pytest.fixture(params=["ds_cnn", "layernorm_mlp"])
def analysed(request: pytest.FixtureRequest) -> Analysed:
    return request.getfixturevalue(request.param)
