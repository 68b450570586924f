"""Graph snapshots (backend_core.common.snapshot) of real lowerings: each stage's snapshot keeps what that
stage showed after later passes edit the graph in place, survives JSON, carries the quantization
parameters on every int8 edge and the decoded requantisation on CMSIS-NN nodes, and points at the
user's own source line."""
from __future__ import annotations

import json

import pytest

from backend_core.common.snapshot.model import snapshot_from_dict
from tests.helpers.lowered import lowered


def test_snapshots_are_immutable_after_later_passes_mutate_the_graph() -> None:
    r = lowered("ds_cnn")
    edge = next(s for s in r.snapshots if s.stage == "edge")
    targets = {n.target for n in edge.nodes}
    # FoldAndAnnotateQParams removes q/dq in place: the edge snapshot must still show them.
    assert "quantized_decomposed.quantize_per_tensor.default" in targets
    assert not any(t.startswith("cortex_m.") for t in targets)


def test_snapshot_round_trips_through_json() -> None:
    r = lowered("layernorm_mlp")
    for snap in r.snapshots:
        again = snapshot_from_dict(json.loads(snap.to_json()))
        assert again == snap


@pytest.mark.parametrize("model", ["ds_cnn", "resnet8", "layernorm_mlp"])
def test_every_quantized_edge_has_qparams(model: str) -> None:
    r = lowered(model)
    for snap in r.snapshots[2:]:   # from edge on, q/dq or folded meta carry the parameters
        nm = snap.node_map()
        missing = [(e.src, e.dst) for e in snap.edges
                   if e.dtype in ("int8", "int16") and e.qparams is None
                   and nm[e.dst].kind != "plumbing"]
        assert not missing, f"{snap.stage}: int8 edges without qparams: {missing[:5]}"


def test_cortex_m_nodes_carry_decoded_requantisation() -> None:
    r = lowered("ds_cnn")
    convs = [n for n in r.final.nodes if n.target == "cortex_m.quantized_conv2d.default"]
    assert convs
    for n in convs:
        assert n.requant is not None and n.requant.effective_scales
        # effective scale = input_scale * weight_scale / output_scale for each output channel
        in_s, out_s = dict(n.input_qparams)[0].scale, n.output_qparams.scale
        w = dict(n.input_qparams)[1]
        expected = [in_s * ws / out_s for ws in (w.scales or (w.scale,))]
        assert n.requant.effective_scales == pytest.approx(expected, rel=1e-6)


def test_user_source_location_points_at_the_model_file_not_framework_frames() -> None:
    r = lowered("ds_cnn")
    conv = next(n for n in r.final.nodes if n.target == "cortex_m.quantized_conv2d.default")
    assert conv.source is not None
    assert conv.source.file.endswith("mlperf_tiny/ds_cnn.py")
    assert conv.module_path.startswith("feature_extractor")
