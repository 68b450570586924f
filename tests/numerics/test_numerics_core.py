"""Per-layer metrics, model-output metrics and per-pass checks on ds_cnn and layernorm_mlp."""
from __future__ import annotations

import copy
import json
import math

import pytest

from backend_core.analyses.numerics.results import PAIRS, NumericsResult
from backend_core.common.snapshot.model import KIND_CMSIS


def _finite_metrics(m) -> None:
    for f in ("sqnr_db", "cosine", "max_abs", "mean_abs"):
        assert math.isfinite(getattr(m, f)), (f, m)
    for f in ("max_lsb", "mean_lsb"):
        v = getattr(m, f)
        assert v is None or math.isfinite(v), (f, m)
    assert -1.0 <= m.cosine <= 1.0


def test_every_lowered_compute_node_has_finite_metrics(analysed) -> None:
    r = analysed.result
    cmsis = [n.id for n in analysed.lowered.final_snapshot.nodes if n.kind == KIND_CMSIS]
    assert cmsis
    for nid in cmsis:
        layer = r.layer(nid)
        assert layer is not None, f"{nid} has no numerics"
        assert layer.vs_fake_quant is not None and layer.vs_float is not None, nid
        assert layer.fake_quant_vs_float is not None, nid
        if layer.reference == "mapped":
            assert layer.local is not None, nid
        assert layer.vs_fake_quant.max_lsb is not None, nid     # int8 output: error in LSB
    for layer in r.layers:
        for pair in PAIRS:
            m = layer.metric(pair)
            if m is not None:
                _finite_metrics(m)
    for o in r.outputs:
        for m in (o.vs_fake_quant, o.vs_float, o.fake_quant_vs_float):
            _finite_metrics(m)


def test_layers_are_keyed_by_final_snapshot_ids(analysed) -> None:
    ids = {n.id for n in analysed.lowered.final_snapshot.nodes}
    assert all(lr.node_id in ids for lr in analysed.result.layers)
    assert [lr.index for lr in analysed.result.layers] == list(range(len(analysed.result.layers)))


def test_model_output_error_equals_direct_computation(analysed) -> None:
    import torch

    from backend_core.analyses.numerics.metrics import ErrorAccumulator

    low = analysed.lowered
    final_mod = low.final_program.module()
    fq_mod = low.pipeline.quantized_module
    float_ep = next(s.program for s in low.stages if s.kind == "export")
    float_mod = float_ep.module()
    acc_fq, acc_fl = ErrorAccumulator(), ErrorAccumulator()
    agree = 0
    with torch.no_grad():
        for x in analysed.samples:
            y_low = final_mod(*x)
            y_fq = fq_mod(*x)
            y_fl = float_mod(*x)
            y_low, y_fq, y_fl = (y[0] if isinstance(y, (list, tuple)) else y for y in (y_low, y_fq, y_fl))
            acc_fq.add(y_fq, y_low)
            acc_fl.add(y_fl, y_low)
            agree += int(y_low.argmax() == y_fl.argmax())
    out = analysed.result.outputs[0]
    for direct, got in ((acc_fq.result(), out.vs_fake_quant), (acc_fl.result(), out.vs_float)):
        assert got.identical == direct.identical
        assert got.sqnr_db == pytest.approx(direct.sqnr_db, rel=1e-6, abs=1e-9)
        assert got.max_abs == pytest.approx(direct.max_abs, rel=1e-6, abs=1e-12)
        assert got.mean_abs == pytest.approx(direct.mean_abs, rel=1e-6, abs=1e-12)
        assert got.cosine == pytest.approx(direct.cosine, rel=1e-9)
    assert out.top1_vs_float == pytest.approx(agree / len(analysed.samples))


def test_float_reference_is_the_eager_model(ds_cnn) -> None:
    """The kept float export still computes what the user's module computes (PT2E did not
    fold batch norms into weights it shares)."""
    import torch

    float_ep = next(s.program for s in ds_cnn.lowered.stages if s.kind == "export")
    x = ds_cnn.samples[0]
    with torch.no_grad():
        torch.testing.assert_close(float_ep.module()(*x), ds_cnn.lowered.model.module(*x))


def test_pass_checks(analysed) -> None:
    by = {s.stage: s for s in analysed.result.stages}
    assert [s.stage for s in analysed.result.stages] == [s.stage for s in analysed.lowered.snapshots]
    assert by["float export"].status == "reference"
    assert by["quantized"].status == "reference"
    assert by["edge"].status == "neutral"
    assert by["final"].status == "neutral"           # lift_constant_tensor_pass changes no number
    assert by["FoldAndAnnotateQParamsPass"].status == "not_runnable"
    a2cm = by["AtenToCortexMPass"]
    assert a2cm.status in ("neutral", "diverged")
    assert "FoldAndAnnotateQParamsPass" in a2cm.passes
    if a2cm.status == "diverged":
        assert a2cm.first_diverging in {lr.node_id for lr in analysed.result.layers}
        assert a2cm.max_lsb_diff is not None and a2cm.max_lsb_diff >= 1


def test_json_round_trip(analysed) -> None:
    text = analysed.result.to_json()
    back = NumericsResult.from_json(text)
    assert back.to_dict() == json.loads(text)
    assert back.layer(analysed.result.layers[0].node_id) is not None


def test_layernorm_fallback_is_compared_in_float(layernorm_mlp) -> None:
    ln = next(lr for lr in layernorm_mlp.result.layers if "layer_norm" in lr.target)
    assert ln.kind == "portable_fallback"
    assert ln.scale is None and ln.vs_float.max_lsb is None
    assert ln.vs_float.sqnr_db > 20


def test_corrupted_scale_is_found_as_worst_layer(ds_cnn) -> None:
    """Halve the requantize multipliers (= the output scale) of one mid-network conv in a copy of
    the final program: that layer, not one of the layers after it, must rank worst."""
    import torch

    from backend_core.analyses.numerics.analyze import analyze

    low = ds_cnn.lowered
    victim = "cortex_m_quantized_conv2d_default_1"
    assert low.final_snapshot.node(victim) is not None
    bad = copy.deepcopy(low.final_program)
    node = next(n for n in bad.graph_module.graph.nodes if n.name == victim)
    idx = next(i for i, a in enumerate(node.target._schema.arguments) if "multiplier" in a.name)
    arg = node.args[idx]
    if isinstance(arg, torch.fx.Node):
        spec = next(s for s in bad.graph_signature.input_specs if s.arg.name == arg.name)
        t = bad.state_dict[spec.target] if spec.target in bad.state_dict else bad.constants[spec.target]
        t.copy_(torch.div(t, 2, rounding_mode="floor"))
    else:
        args = list(node.args)
        args[idx] = [int(m) // 2 for m in arg]
        node.args = tuple(args)
    r = analyze(low.stages, low.final_snapshot, ds_cnn.samples[:2], snapshots=low.snapshots,
                lowered=bad)
    worst = r.worst(1)[0]
    assert worst.node_id == victim, [(lr.node_id, lr.local.sqnr_db if lr.local else None) for lr in r.worst(4)]
    assert worst.local.sqnr_db < 20
    final = next(s for s in r.stages if s.stage == "final")
    assert final.status == "diverged" and final.first_diverging == victim
    # the original program is untouched
    assert ds_cnn.result.layer(victim).local.sqnr_db > 30


def test_explicit_layout_flow_aligns_nhwc_tensors() -> None:
    """The explicit-layout flow lowers NCHW tensors to NHWC: references must be permuted, or
    every layer would show ~0 dB against fake-quant."""
    from tests.helpers.numerics_job import numerics_job

    r = numerics_job("ds_cnn", 1, flow="explicit").numerics
    convs = [lr for lr in r.layers if "conv2d_nhwc" in lr.target]
    assert convs and all(lr.shape[-1] == 64 for lr in convs)          # NHWC in the final graph
    for lr in convs:
        assert lr.vs_fake_quant.sqnr_db > 30 and lr.local.sqnr_db > 40, lr.node_id
    assert next(s for s in r.stages if s.stage == "final").status == "neutral"
