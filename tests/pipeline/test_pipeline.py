"""The stepped pipeline on real models with real ExecuTorch: stage names, equality with
CortexMPassManager.transform(), the float origin of every kernel, the reports of each pass."""
from __future__ import annotations

import copy

import pytest

from backend_core.stages.pipeline.passes import pass_list, stage_names
from backend_core.common.provenance import Provenance
from backend_core.common.snapshot.capture import capture
from backend_core.common.snapshot.model import KIND_CMSIS

from tests.helpers.lowered import MODELS_FAST, lowered


@pytest.mark.parametrize("model", MODELS_FAST)
def test_stage_names_are_export_quantize_edge_then_every_pass_then_final(model: str) -> None:
    r = lowered(model)
    assert r.status == "done", r.error
    names = [s.stage for s in r.snapshots]
    assert names == ["float export", "quantized", "edge", *stage_names(pass_list("legacy")), "final"]


def _node_signature(program) -> list[tuple]:
    snap = capture(program, "x", 0, "final", final=True)
    return [(n.id, n.target, n.args, n.inputs) for n in snap.nodes]


@pytest.mark.parametrize("model", MODELS_FAST)
def test_final_graph_equals_cortex_m_pass_manager_transform(model: str) -> None:
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager

    from backend_core.common.cpus import target_config

    r = lowered(model)
    pipe = r.pipeline
    reference = CortexMPassManager(copy.deepcopy(pipe.edge_program),
                                   target_config=target_config("cortex-m55")).transform()
    assert _node_signature(pipe.final_program) == _node_signature(reference)


@pytest.mark.parametrize("model", ["ds_cnn", "resnet8", "deep_autoencoder"])
def test_every_final_cortex_m_node_maps_back_to_the_float_export_graph(model: str) -> None:
    r = lowered(model)
    prov = Provenance(r.snapshots)
    last = len(r.snapshots) - 1
    float_nodes = r.snapshots[0].node_map()
    kernels = [n for n in r.final.nodes if n.kind == KIND_CMSIS and n.target != "cortex_m.pad.default"]
    assert kernels
    for n in kernels:
        origin = prov.step(n.id, last, 0)
        assert origin in float_nodes, f"{n.id} ({n.target}) has no float origin"
        assert float_nodes[origin].fx_op == "call_function"


def test_diffs_report_the_lowering_rewrites() -> None:
    r = lowered("ds_cnn")
    report = r.report()
    aten_to_cm = next(s for s in report["stages"] if s["name"] == "AtenToCortexMPass")
    pairs = {(x["from_op"], x["to_op"]) for x in aten_to_cm["rewritten"]}
    assert ("aten.convolution.default", "cortex_m.quantized_conv2d.default") in pairs
    assert ("aten.linear.default", "cortex_m.quantized_linear.default") in pairs
    fold = next(s for s in report["stages"] if s["name"] == "FoldAndAnnotateQParamsPass")
    assert fold["removed"] and all("quantize" in x["op"] for x in fold["removed"])


def test_explicit_layout_flow_lowers_ds_cnn_with_its_own_pass_list() -> None:
    r = lowered("ds_cnn", flow="explicit")
    assert r.status == "done", r.error
    assert [s.stage for s in r.snapshots][3:-1] == stage_names(pass_list("explicit"))
    assert sum(1 for n in r.final.nodes if n.kind == KIND_CMSIS) >= 10
    assert not r.fallbacks()


def test_target_cpu_changes_the_lowered_graph() -> None:
    m55 = lowered("ds_cnn", target="cortex-m55")
    m4 = lowered("ds_cnn", target="cortex-m4")
    sizes = lambda r: sorted(n.args for n in r.final.nodes if n.target == "memory.alloc")  # noqa: E731
    assert sizes(m55) != sizes(m4)


def test_the_pte_and_bpte_are_serialised() -> None:
    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    r = lower("layernorm_mlp", PipelineOptions(), use_cache=False, outputs=LowerOutputs(pte=True, bpte=True))
    pte, bpte = r.blobs["model.pte"], r.blobs["model.bpte"]
    assert pte[4:8] == b"ET12"                      # ExecuTorch flatbuffer identifier
    assert len(bpte) > len(pte)


@pytest.mark.slow
def test_mobilenet_v2_lowers_with_every_kernel_traced_to_the_float_graph() -> None:
    r = lowered("mv2")
    assert r.status == "done", r.error
    kernels = [n for n in r.final.nodes if n.kind == KIND_CMSIS]
    assert len(kernels) >= 50
    prov = Provenance(r.snapshots)
    last = len(r.snapshots) - 1
    float_nodes = r.snapshots[0].node_map()
    untraced = [n.id for n in kernels if n.target != "cortex_m.pad.default"
                and prov.step(n.id, last, 0) not in float_nodes]
    assert not untraced
    for n in r.fallbacks():
        assert n.fallback is not None and n.fallback.category != "unknown", (n.id, n.fallback)


def test_bundled_inputs_carry_channels_last_bytes_for_a_3_channel_model() -> None:
    """The runtime copies bundled bytes verbatim into a channels-last input: they must be NHWC."""
    import torch
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program,
    )

    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    r = lower("resnet8", PipelineOptions(), use_cache=False, outputs=LowerOutputs(bpte=True, edge_program=True))
    x = r.pipeline.example_inputs[0]
    assert x.shape[1] == 3 and x.is_contiguous(memory_format=torch.channels_last)
    bp = deserialize_from_flatbuffer_to_bundled_program(r.blobs["model.bpte"])
    stored = bp.method_test_suites[0].test_cases[0].inputs[0].val
    assert list(stored.sizes) == list(x.shape)
    nhwc = x.permute(0, 2, 3, 1).contiguous().numpy().tobytes()
    nchw = x.contiguous().numpy().tobytes()
    assert bytes(stored.data) == nhwc and bytes(stored.data) != nchw
