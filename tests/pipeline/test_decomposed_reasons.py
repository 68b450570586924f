"""Reasons a user of real model code meets (issue 38): a detection head's `.item()` (no unknown), a PReLU and
an attention mask explained as the op the user wrote, with one reason for all the nodes it became."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.stages.pipeline.stages import PipelineOptions

MODELS = '''
import torch
import torch.nn.functional as F


class Head(torch.nn.Module):
    """A detection head's strides read as scalars (ultralytics' make_anchors: new_full(..., stride))."""
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.register_buffer("strides", torch.tensor([8.0, 16.0]))

    def forward(self, x):
        y = self.conv(x).flatten(2)
        stride = y.new_full((y.shape[-1], 1), self.strides[0])
        return y * stride.t()


class PReLUNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.act, self.c2 = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.PReLU(8), torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.c2(self.act(self.c1(x)))


class MaskedAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(16, 48)
        mask = torch.zeros(1, 1, 8, 8)
        mask[..., 6:] = float("-inf")
        self.register_buffer("mask", mask)

    def forward(self, x):
        q, k, v = self.qkv(x).unflatten(-1, (3, 2, 8)).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask)


def head():
    return Head().eval(), (torch.randn(1, 3, 4, 4).to(memory_format=torch.channels_last),)


def prelu():
    torch.manual_seed(0)
    return PReLUNet().eval(), (torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last),)


def attention():
    torch.manual_seed(0)
    return MaskedAttention().eval(), (torch.randn(1, 8, 16),)
'''


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("reasons") / "decomposed_models.py"
    p.write_text(MODELS)
    return p


def _fallbacks(models: Path, name: str) -> list:
    from backend_core.orchestration.jobs.steps.lower import lower_source

    r = lower_source(f"{models}:{name}", PipelineOptions(calib=2), use_cache=False)
    assert r.status == "done", r.error
    fb = r.fallbacks()
    assert "unknown" not in [n.fallback.category for n in fb], [(n.target, n.fallback.message) for n in fb]
    return fb


def test_item_is_a_data_dependent_scalar_with_the_fix(models: Path) -> None:
    fb = _fallbacks(models, "head")
    item = [n for n in fb if n.target == "aten._local_scalar_dense.default"]
    assert item, [n.target for n in fb]
    r = item[0].fallback
    assert r.category == "data_dependent_scalar"
    assert ".item()" in r.message and "decomposed_models.py:" in r.message
    assert "constants" in r.suggestion and "export" in r.suggestion


def test_prelu_pieces_share_one_reason(models: Path) -> None:
    """PReLU's `x > 0` is not index arithmetic: its gt, mul and where get PReLU's one reason."""
    fb = [n for n in _fallbacks(models, "prelu") if n.fallback.user_op is not None
          and n.fallback.user_op.target == "aten.prelu.default"]
    targets = {n.target for n in fb}
    assert "aten.gt.Scalar" in targets and len(fb) >= 2, targets
    assert {n.fallback.category for n in fb} == {"not_annotated"}
    assert len({n.fallback.message for n in fb}) == 1
    msg = fb[0].fallback.message
    assert "prelu" in msg and "index arithmetic" in msg and "this gt" not in msg
    assert "ReLU" in fb[0].fallback.suggestion


def test_attention_mask_ops_are_the_attention(models: Path) -> None:
    fb = [n for n in _fallbacks(models, "attention") if n.fallback.user_op is not None
          and n.fallback.user_op.target == "aten.scaled_dot_product_attention.default"]
    mask_ops = {n.target.split(".")[1] for n in fb} & {"eq", "logical_not", "any"}
    assert mask_ops, [n.target for n in fb]
    assert {n.fallback.category for n in fb} == {"not_annotated"}
    assert len({n.fallback.message for n in fb}) == 1
    msg = fb[0].fallback.message
    assert "attention-mask" in msg and "this eq" not in msg
    assert not [n for n in fb if n.fallback.category == "integer_arithmetic"]
