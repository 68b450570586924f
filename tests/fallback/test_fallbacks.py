"""Every fallback in the final graph is found and explained, and the set equals exactly the
non-cortex_m compute ops of ExecuTorch's own final graph."""
from __future__ import annotations

import copy

import pytest

from backend_core.stages.fallback import CATEGORIES
from backend_core.common.snapshot.capture import target_name

from tests.helpers.lowered import MODELS_FAST, lowered

# Written out here, independently of backend_core's classifier.
NOT_COMPUTE = {"getitem", "memory.alloc", "view_copy", "_clone_dim_order", "clone", "permute_copy",
               "_to_dim_order_copy", "expand_copy", "squeeze_copy", "unsqueeze_copy", "cat",
               "slice_copy", "select_copy", "t_copy", "transpose_copy"}


def _executorch_compute_fallbacks(result) -> set[str]:
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager

    from backend_core.common.cpus import target_config

    ep = CortexMPassManager(copy.deepcopy(result.pipeline.edge_program),
                            target_config=target_config(result.options.target)).transform()
    out = set()
    for n in ep.graph.nodes:
        if n.op != "call_function":
            continue
        name = target_name(n.target)
        base = name.split(".")[-2] if name.count(".") >= 2 else name
        if name.startswith("cortex_m.") or "quantize" in base or base in NOT_COMPUTE or name == "getitem":
            continue
        out.add(n.name)
    return out


@pytest.mark.parametrize("model", MODELS_FAST)
def test_reported_fallbacks_equal_executorch_non_cortex_m_compute_ops(model: str) -> None:
    r = lowered(model)
    assert {n.id for n in r.fallbacks()} == _executorch_compute_fallbacks(r)


@pytest.mark.parametrize("model", MODELS_FAST)
def test_every_fallback_has_a_reason_with_evidence(model: str) -> None:
    for n in lowered(model).fallbacks():
        fb = n.fallback
        assert fb is not None, n.id
        assert fb.category in CATEGORIES and fb.category != "unknown", (n.id, fb)
        assert len(fb.message) > 20 and fb.evidence and fb.stage


def _reason(model: str, op_base: str):
    r = lowered(model)
    hits = [n for n in r.fallbacks() if n.target.split(".")[-2] == op_base]
    assert hits, [n.target for n in r.fallbacks()]
    return hits[0].fallback


def test_layernorm_is_explained_as_not_annotated_float_island() -> None:
    fb = _reason("layernorm_mlp", "native_layer_norm")
    assert fb.category == "not_annotated"
    assert any("Non annotated" in e for e in fb.evidence)
    assert any("float island" in e for e in fb.evidence)
    assert "LayerNorm" in fb.suggestion


def test_relu_after_layernorm_is_explained_as_unfusable_activation() -> None:
    fb = _reason("layernorm_mlp", "clamp")
    assert fb.category == "activation_not_fused"
    assert any("Cannot fuse activation" in e for e in fb.evidence)
    assert fb.stage == "QuantizedClampActivationPass"


def test_softmax_over_channels_quotes_the_quantizer_rejection() -> None:
    fb = _reason("softmax_channels", "_softmax")
    assert fb.category == "rejected_by_quantizer"
    assert "unsupported configuration" in fb.message
    assert "last dimension" in fb.suggestion


def test_ceil_mode_max_pool_cites_the_pattern_checker_flag() -> None:
    fb = _reason("maxpool_ceil", "max_pool2d_with_indices")
    assert fb.category == "no_cortex_m_rewrite"
    assert any("skip_quantized_max_pool2d" in e for e in fb.evidence)
    assert "ceil_mode=False" in fb.suggestion


def test_ds_cnn_lowers_completely_to_cmsis_nn() -> None:
    r = lowered("ds_cnn")
    assert r.fallbacks() == []
    kinds = r.final.count_by_kind()
    assert kinds["cmsis_nn"] >= 10


def test_json_report_has_the_documented_fields() -> None:
    rep = lowered("layernorm_mlp").report()
    assert {"model", "target", "flow", "status", "stages", "fallbacks"} <= set(rep)
    st = rep["stages"][-1]
    assert {"name", "nodes", "added", "removed", "rewritten"} <= set(st)
    node = next(n for n in st["nodes"] if n["name"] == "aten_native_layer_norm_default")
    assert node["op"] == "aten.native_layer_norm.default"
    assert {"kind", "qparams", "debug_handle", "fallback"} <= set(node)
    fb = next(f for f in rep["fallbacks"] if f["op"] == "aten.native_layer_norm.default")
    assert {"node", "op", "category", "reason", "evidence", "suggestion"} <= set(fb)
