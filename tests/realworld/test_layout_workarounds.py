"""--keep-going's value-preserving workarounds (issue 26), on a small model with timm GhostModule's
pattern: ExecuTorch's to_edge turns a no-op channel slice into a contiguous alias_copy (the
squeeze-excite multiply then fails AtenToCortexMPass), and its portable cat scrambles a channels-last
concatenation on the target (the pre-flight's layout-ignored rule). The workarounds are applied to a
copy of the export, change no value, and the lowering they give passes the pre-flight. The QEMU run
of the same lowering is opt-in (it needs an ExecuTorch checkout)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.target_run import run_on_m55_or_skip

from backend_core.stages.fallback.changed import keep_going_summary
from backend_core.stages.fallback.rewrites import CAT_CONTIGUOUS, NOOP_ALIAS, REWRITES
from backend_core.stages.pipeline.stages import PipelineOptions

MODEL = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "ghostlike.py") + ":model"


def _lower(keep_going: bool) -> Any:
    from backend_core.orchestration.jobs.steps.lower import lower_source

    return lower_source(MODEL, PipelineOptions(calib=2, keep_going=keep_going), use_cache=False)


@pytest.fixture(scope="module")
def failed() -> Any:
    return _lower(False)


@pytest.fixture(scope="module")
def kept() -> Any:
    return _lower(True)


def test_the_failure_offers_the_workaround_on_the_users_line(failed: Any) -> None:
    assert failed.status == "failed" and failed.error["stage"] == "AtenToCortexMPass"
    f = failed.error["failure"]
    assert f["source"].endswith("ghostlike.py:23") and f["code"] == "return self.out(y * gate)"
    assert f["producer"]["source"].endswith("ghostlike.py:21")
    assert f["workaround"] == NOOP_ALIAS
    assert "ghostlike.py:21" in f["workaround_text"] and "changes no value" in f["workaround_text"]


def test_keep_going_applies_both_workarounds_and_the_preflight_is_clean(kept: Any) -> None:
    from backend_core.analyses.preflight import findings_of

    assert kept.status == "done", kept.error
    rewrites = kept.verdicts["rewrites"]
    assert list(rewrites) == [NOOP_ALIAS, CAT_CONTIGUOUS]
    assert rewrites[NOOP_ALIAS]["stage"] == "AtenToCortexMPass"
    assert rewrites[CAT_CONTIGUOUS]["via"] == "pre-flight"
    assert not kept.verdicts["quarantined"]                  # the multiply stays quantized ...
    ops = [n.target for n in kept.final.nodes]
    assert any("quantized_mul" in t for t in ops), ops     # ... and runs on CMSIS-NN
    assert not [f for f in findings_of(kept.final) if f.certain]
    assert not kept.fallbacks()
    text = keep_going_summary(kept.verdicts)
    assert NOOP_ALIAS in text and CAT_CONTIGUOUS in text and "NOT what plain ExecuTorch produces" in text
    assert "ghostlike.py:21" in text


def test_the_workarounds_change_no_value() -> None:
    import torch

    from backend_core.stages.models import load_model, parse_model_source

    loaded = load_model(parse_model_source(MODEL))
    x = loaded.inputs_for("legacy")
    ep = torch.export.export(loaded.module, x)
    edited = ep
    for name in (NOOP_ALIAS, CAT_CONTIGUOUS):
        edited, _ = REWRITES[name][0](edited)
    targets = [str(n.target) for n in edited.graph.nodes]
    assert "aten.alias.default" not in targets and targets.count("aten.clone.default") == 3
    assert torch.equal(ep.module()(*x), edited.module()(*x))


@pytest.mark.slow
def test_keep_going_lowering_passes_on_qemu_m55_bit_exact(tmp_path: Path) -> None:
    r = run_on_m55_or_skip(MODEL, tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
    assert "bit for bit" in r.summary()


WINDOWED = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "windowed_attention.py") + ":model"


def test_window_partition_layout_gets_two_more_workarounds_and_a_clean_preflight() -> None:
    """timm EfficientViT's pattern: the bmm is quarantined after ReplaceScalarWithTensorArgPass fails; the
    window partition then leaves a portable permute_copy with a channels-last input (dim-order-mismatch)
    and CMSIS-NN convs fed contiguous view copies (cmsis-needs-channels-last), and the head's
    `feat.view(B, -1, w, w)` of a channels-last conv output becomes a memory view read as NCHW
    (view-of-channels-last). All get value-preserving workarounds and nothing the pre-flight is certain of
    is left."""
    from backend_core.stages.fallback.rewrites import CL_AFTER_VIEWS, CL_INTO_CONVS, PERMUTE_CONTIGUOUS
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.analyses.preflight import findings_of

    kept = lower_source(WINDOWED, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert kept.status == "done", kept.error
    assert list(kept.verdicts["rewrites"]) == [PERMUTE_CONTIGUOUS, CL_INTO_CONVS, CL_AFTER_VIEWS]
    assert list(kept.verdicts["quarantined"]) == ["bmm"]
    assert not [f for f in findings_of(kept.final) if f.certain]


def test_the_window_partition_workarounds_change_no_value() -> None:
    import torch

    from backend_core.stages.fallback.rewrites import CL_AFTER_VIEWS, CL_INTO_CONVS, PERMUTE_CONTIGUOUS
    from backend_core.stages.models import load_model, parse_model_source

    loaded = load_model(parse_model_source(WINDOWED))
    x = loaded.inputs_for("legacy")
    ep = torch.export.export(loaded.module, x)
    edited = ep
    for name in (PERMUTE_CONTIGUOUS, CL_INTO_CONVS, CL_AFTER_VIEWS):
        edited, _ = REWRITES[name][0](edited)
    assert [str(n.target) for n in edited.graph.nodes].count("aten.clone.default") >= 2
    assert torch.equal(ep.module()(*x), edited.module()(*x))


MIXED = str(Path(__file__).resolve().parents[1] / "preflight" / "models" / "mixed_layout_add.py")


def test_window_reverse_into_a_residual_add_gets_both_layouts_restored() -> None:
    """timm EfficientViT's window reverse: a cortex_m.transpose of a channels-last conv output and a CMSIS-NN
    add of an NHWC and an NCHW buffer (cmsis-ignores-dim-order, wrong values on QEMU M55). --keep-going
    makes the permute on an NCHW copy and gives its result back its eager channels-last layout, in one
    round, and the pre-flight is then clean."""
    from backend_core.stages.fallback.rewrites import CL_AFTER_VIEWS, PERMUTE_CONTIGUOUS
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.analyses.preflight import findings_of

    plain = lower_source(MIXED, PipelineOptions(calib=2), use_cache=False)
    assert {f.rule for f in findings_of(plain.final) if f.certain} == {"cmsis-ignores-dim-order"}
    kept = lower_source(MIXED, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert kept.status == "done", kept.error
    rewrites = kept.verdicts["rewrites"]
    assert list(rewrites) == [PERMUTE_CONTIGUOUS, CL_AFTER_VIEWS]
    assert {r["round"] for r in rewrites.values()} == {1}
    assert not [f for f in findings_of(kept.final) if f.certain]
    add = next(n for n in kept.final.nodes if "quantized_add" in n.target)
    assert add.dim_order == (0, 2, 3, 1)


def test_the_window_reverse_workarounds_change_no_value() -> None:
    import torch

    from backend_core.stages.fallback.rewrites import CL_AFTER_VIEWS, PERMUTE_CONTIGUOUS
    from backend_core.stages.models import load_model, parse_model_source

    loaded = load_model(parse_model_source(MIXED))
    x = loaded.inputs_for("legacy")
    ep = torch.export.export(loaded.module, x)
    edited = ep
    for name in (PERMUTE_CONTIGUOUS, CL_AFTER_VIEWS):
        edited, _ = REWRITES[name][0](edited)
    assert [str(n.target) for n in edited.graph.nodes].count("aten.clone.default") == 2
    assert torch.equal(ep.module()(*x), edited.module()(*x))


@pytest.mark.slow
def test_window_reverse_kept_going_passes_on_qemu_m55_bit_exact(tmp_path: Path) -> None:
    r = run_on_m55_or_skip(MIXED, tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
    assert "bit for bit" in r.summary()


PARTITION = str(Path(__file__).resolve().parents[1] / "preflight" / "models" / "window_partition.py")


def test_a_six_dim_window_partition_is_made_in_four_dims() -> None:
    """ExecuTorch rewrites the window partition's 6-D int8 transpose into cortex_m.transpose, which takes 4
    dims (cmsis-unsupported-rank: the method fails on QEMU M55); --keep-going merges the dims that stay
    together and the pre-flight is clean."""
    from backend_core.stages.fallback.rewrites import FEWER_DIMS
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.analyses.preflight import findings_of

    kept = lower_source(PARTITION, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert kept.status == "done", kept.error
    assert list(kept.verdicts["rewrites"]) == [FEWER_DIMS]
    assert kept.verdicts["rewrites"][FEWER_DIMS]["nodes"]
    assert not [f for f in findings_of(kept.final) if f.certain]
    ranks = [len(n.shape) for n in kept.final.nodes if n.target == "cortex_m.transpose.default"]
    assert ranks and max(ranks) == 4


def test_the_fewer_dims_permute_changes_no_value() -> None:
    import torch

    from backend_core.stages.fallback.rewrites import FEWER_DIMS, collapse_permutation
    from backend_core.stages.models import load_model, parse_model_source

    assert collapse_permutation([1, 2, 2, 3, 2, 8], [0, 1, 3, 2, 4, 5]) == ([2, 2, 3, 16], [0, 2, 1, 3])
    loaded = load_model(parse_model_source(PARTITION))
    x = loaded.inputs_for("legacy")
    ep = torch.export.export(loaded.module, x)
    edited, _ = REWRITES[FEWER_DIMS][0](ep)
    assert max(len(n.meta["val"].shape) for n in edited.graph.nodes
               if n.op == "call_function" and "permute" in str(n.target)) == 4
    assert torch.equal(ep.module()(*x), edited.module()(*x))


GROUP_SPLIT = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "group_attention_split.py") + ":model"
VIEW_CL = str(Path(__file__).resolve().parents[1] / "preflight" / "models" / "view_of_channels_last.py")


@pytest.mark.parametrize("model, rewrites", [(GROUP_SPLIT, ["channels_last_into_convs", "channels_last_after_views"]),
                                             (VIEW_CL, ["channels_last_after_views"])])
def test_views_and_splits_of_channels_last_tensors_get_eager_layouts_back(model: str, rewrites: list[str]) -> None:
    """timm EfficientViT's `feat.view(B, -1, H, W).split(...)` of a conv output: to_executorch reads the view's
    NHWC base as NCHW (view-of-channels-last), the split writes contiguous pieces, the depthwise conv refuses
    them and the add mixes layouts. --keep-going gives the view an NCHW base, makes the split on it and clones
    the pieces back to channels-last; the pre-flight is then clean (both PASS bit for bit on QEMU M55)."""
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.analyses.preflight import findings_of

    kept = lower_source(model, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert kept.status == "done", kept.error
    assert list(kept.verdicts["rewrites"]) == rewrites
    assert not [f for f in findings_of(kept.final) if f.certain]


@pytest.mark.parametrize("model", [GROUP_SPLIT, VIEW_CL])
def test_the_view_and_split_workarounds_change_no_value(model: str) -> None:
    import torch

    from backend_core.stages.fallback.rewrites import CL_AFTER_VIEWS
    from backend_core.stages.models import load_model, parse_model_source

    loaded = load_model(parse_model_source(model))
    x = loaded.inputs_for("legacy")
    ep = torch.export.export(loaded.module, x)
    edited, _ = REWRITES[CL_AFTER_VIEWS][0](ep)
    clones = [n for n in edited.graph.nodes if str(n.target) == "aten.clone.default"]
    assert clones and any(n.kwargs.get("memory_format") == torch.contiguous_format for n in clones)
    # the copies are exact; eager's depthwise conv rounds in the last bit differently per memory format
    torch.testing.assert_close(ep.module()(*x), edited.module()(*x), rtol=0, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("model", [GROUP_SPLIT, VIEW_CL])
def test_view_and_split_kept_going_pass_on_qemu_m55_bit_exact(model: str, tmp_path: Path) -> None:
    r = run_on_m55_or_skip(model, tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
    assert "target == lowered program bit for bit" in r.summary()
