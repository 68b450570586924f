"""Fallback reasons on the model as the user gave it, in terms of the op the user wrote (issue 12,
cases 1-8), on ExecuTorch's own Cortex-M test cases and one user-style model file."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from backend_core.lowering.lower import LoweringResult, lower
from backend_core.stages.pipeline.stages import PipelineOptions
from . import et_cases

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"
_DONE: dict[tuple, LoweringResult] = {}


def _lower(name: str, *, channels_last: bool = False, verify: bool = False) -> LoweringResult:
    key = (name, channels_last, verify)
    if key not in _DONE:
        src = str(FIXTURES / name) if name.endswith(".py") else et_cases.source(name)
        _DONE[key] = lower(src, PipelineOptions(calib=0, channels_last=channels_last), use_cache=False,
                           verify_suggestions=verify)
    r = _DONE[key]
    assert r.status == "done", r.error
    return r


def _only(r: LoweringResult, op: str):
    hits = [n for n in r.fallbacks() if n.target == op]
    assert len(hits) == 1, [(n.id, n.target) for n in r.fallbacks()]
    return hits[0].fallback


# 1. the model as given; layout named on the node; --channels-last explicit and reported
def test_nchw_conv_falls_back_for_layout_on_the_model_as_given() -> None:
    fb = _only(_lower("test_conv__conv2d_nchw"), "aten.convolution.default")
    assert fb.category == "layout"
    assert "model.to(memory_format=torch.channels_last)" in fb.message
    assert "x.to(memory_format=torch.channels_last)" in fb.message
    assert fb.user_op.target == "aten.conv2d.default" and "aten.conv2d.default" in fb.message


def test_channel_broadcast_add_on_nchw_tensors_is_a_layout_fallback() -> None:
    fb = _only(_lower("test_add__broadcast_channels_continous"), "aten.add.Tensor")
    assert fb.category == "layout"
    assert "[2, 8, 5, 5] with [1, 8, 1, 1]" in fb.message


def test_channels_last_is_an_explicit_option_that_the_json_and_html_reports_state() -> None:
    from backend_core.analyses.report.html_report import render_html

    as_given = _lower("test_conv__conv2d_nchw")
    converted = _lower("test_conv__conv2d_nchw", channels_last=True)
    assert converted.fallbacks() == [] and as_given.fallbacks()
    assert as_given.report(with_graphs=False)["options"]["channels_last"] is False
    rep = converted.report()
    assert rep["options"]["channels_last"] is True
    assert "channels_last: on" in render_html(rep, with_graphs=False)


def test_user_model_fed_nchw_keeps_its_fallbacks_and_the_fusion_advice_points_at_the_conv() -> None:
    r = _lower("conv_relu_nchw.py", verify=True)
    conv = _only(r, "aten.convolution.default")
    relu = _only(r, "aten.clamp.default")
    assert conv.category == "layout" and conv.user_op.source.endswith("conv_relu_nchw.py:12")
    # 8. the activation already follows a conv: no "place it after a conv" advice
    assert relu.category == "activation_not_fused"
    assert "already follows aten.conv2d.default" in relu.suggestion
    assert "Place the activation directly after" not in relu.suggestion
    assert "the end of a float island" in relu.message      # its input is cortex_m.quantize_per_tensor
    assert conv.verified == relu.verified == "verified"
    assert "verified: this removes the fallback" in conv.suggestion


# 2. conv3d lowers; the conv stays on a portable float kernel
def test_conv3d_lowers_with_the_conv_on_a_portable_float_kernel() -> None:
    r = _lower("test_conv__conv3d")
    fb = _only(r, "aten.convolution.default")
    assert fb.user_op.target == "aten.conv3d.default"
    assert fb.category == "not_annotated" and "aten.conv3d.default" in fb.message
    node = next(n for n in r.fallbacks() if n.target == "aten.convolution.default")
    assert node.dtype == "float32"


# 3. relu6: not annotated at quantization time; the fix is verified by re-lowering
def test_relu6_is_explained_on_the_op_the_user_wrote_and_its_fix_is_verified() -> None:
    r = _lower("test_nn_functional__conv_relu6_avgpool", verify=True)
    fb = _only(r, "aten.hardtanh.default")
    assert fb.category == "not_annotated"
    assert fb.user_op.target == "aten.relu6.default"
    assert "aten.relu6.default at quantization time" in fb.message and "turned it into hardtanh" in fb.message
    assert "F.hardtanh(x, 0.0, 6.0)" in fb.suggestion
    assert fb.verified == "verified" and "1 → 0 fallback(s)" in fb.verification
    # 8. the pass warning names a dequantize: not called "the end of a float island"
    assert any("cortex_m_dequantize_per_tensor" in e for e in fb.evidence)
    assert "float island" not in fb.message.split("runs")[0]


# 4. broadcasting matmul: aten.matmul at quantization time, split into bmm by to_edge
def test_broadcasting_matmul_is_explained_as_matmul_at_quantization_time() -> None:
    fb = _only(_lower("test_batch_matmul__matmul_broadcast_rank3"), "aten.bmm.default")
    assert fb.user_op.target == "aten.matmul.default"
    assert "MatmulToBmmPass" in fb.message and "split it into bmm" in fb.message
    assert "no pattern for bmm" not in fb.message


# 5. nn.LSTM: one explanation, on the module
def test_lstm_is_explained_once_on_the_module() -> None:
    from app.cli.lower import print_fallbacks

    r = _lower("test_lstm__lstm_fp32")
    fbs = [n.fallback for n in r.fallbacks()]
    assert len(fbs) > 20
    assert {f.group for f in fbs} == {"module:lstm"}
    assert {f.category for f in fbs} == {"unsupported_module"}
    assert all("nn.LSTM `lstm` is not supported" in f.message for f in fbs)
    assert not any("between a dequantize and a quantize" in f.message for f in fbs)
    out = io.StringIO()
    print_fallbacks(r.report(with_graphs=False), out)
    assert out.getvalue().count("is not supported by the Cortex-M backend") == 1
    # they are different ops (linear, sigmoid, tanh, mul, add) of one module, not "of the same op" (issue 46)
    assert f"and {len(fbs) - 1} more node(s) that the same op of yours became (" in out.getvalue()
    assert "of the same op:" not in out.getvalue()


# 6. rejected_by_quantizer names the limit from the checker's code and the node's arguments
@pytest.mark.parametrize("case, words", [
    ("test_conv_transpose__conv_transpose2d_output_padding_1", "output_padding=[1, 1]"),
    ("test_avg_pool2d__avgpool_2x2_divisor_override", "divisor_override="),
    ("test_add__alpha", "alpha=0.5 is not an integer"),
    ("test_add__broadcast_1", "broadcast shape [1] with [2, 2, 2, 2]"),
    ("test_softmax__dim_not_last", "softmax over dim"),
])
def test_rejected_by_quantizer_names_the_limit_hit(case: str, words: str) -> None:
    fbs = [n.fallback for n in _lower(case).fallbacks() if n.fallback.category == "rejected_by_quantizer"]
    assert fbs, [(n.id, n.fallback.category) for n in _lower(case).fallbacks()]
    assert any(words in f.message for f in fbs), [f.message for f in fbs]
    assert all(f.user_op.target in f.message for f in fbs)


def test_softmax_dim_fix_is_verified_by_relowering() -> None:
    fb = _only(_lower("test_softmax__dim_not_last", verify=True), "aten._softmax.default")
    assert fb.verified == "verified"


# 7. integer index arithmetic has its own category, with evidence
@pytest.mark.slow
def test_integer_index_arithmetic_has_its_own_category() -> None:
    r = _lower("test_silero_vad__silero_vad_16k")
    ints = [n for n in r.fallbacks() if n.fallback.category == "integer_arithmetic"]
    assert {n.target for n in ints} >= {"aten.arange.start_step", "aten.abs.default", "aten.sub.Tensor"}
    for n in ints:
        assert n.dtype == "int64"
        assert any(e.startswith("integer data:") for e in n.fallback.evidence)
        assert "usually cheap" in n.fallback.message
    assert not [n for n in r.fallbacks() if n.fallback.category == "unknown"]
