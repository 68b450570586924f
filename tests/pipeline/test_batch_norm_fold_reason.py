"""A batch norm that prepare_pt2e did not fold says why and how to make it fold (issue 38): after a
concatenation (DenseNet's pre-activation blocks), on the model's input; a conv → batch norm folds and
leaves no batch norm to explain."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.orchestration.jobs.steps.lower import lower_source
from backend_core.stages.pipeline.stages import PipelineOptions

MODELS = '''
import torch
from torch import nn


class PreAct(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.c = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        y = torch.cat([self.a(x), self.b(x)], 1)
        return self.c(torch.relu(self.bn(y)))


class InputNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.a = nn.Conv2d(3, 8, 3)

    def forward(self, x):
        return torch.relu(self.a(self.bn(x)))


class Folded(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.a(x)))


def _make(cls):
    torch.manual_seed(0)
    m = cls().eval().to(memory_format=torch.channels_last)
    return m, (torch.randn(1, 3, 16, 16).to(memory_format=torch.channels_last),)


def preact():
    return _make(PreAct)


def input_norm():
    return _make(InputNorm)


def folded():
    return _make(Folded)
'''


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bn") / "bn_models.py"
    path.write_text(MODELS)
    return path


def _batch_norms(path: Path, name: str) -> list:
    res = lower_source(f"{path}:{name}", PipelineOptions(calib=1), use_cache=False)
    assert res.status == "done", res.error
    return [n for n in res.fallbacks() if "batch_norm" in n.target]


def test_batch_norm_after_cat_names_the_cat_and_the_reorder(models: Path) -> None:
    (bn,) = _batch_norms(models, "preact")
    msg = bn.fallback.message
    assert "was not folded" in msg and "`cat` at bn_models.py:" in msg, msg
    assert "pre-activation" in msg
    assert "conv → batch norm → ReLU" in bn.fallback.suggestion


def test_batch_norm_on_the_input_says_fold_it_into_preprocessing(models: Path) -> None:
    (bn,) = _batch_norms(models, "input_norm")
    assert "normalises the model's input" in bn.fallback.message
    assert "preprocessing" in bn.fallback.suggestion


def test_conv_then_batch_norm_folds_and_leaves_nothing_to_explain(models: Path) -> None:
    assert _batch_norms(models, "folded") == []
