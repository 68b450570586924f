"""Per-layer gaps without a target build: the UART of a real QEMU run (tiny_conv_model.py on mps3-an547,
stock ExecuTorch runner with intermediate outputs, recorded as text) + an ETRecord generated here from a
fresh, real lowering of the same seeded model (byte-identical to the one that ran) -> Inspector -> rows
on the final snapshot's node ids.

That recorded run found a real problem: the .bpte stores the input in NCHW byte order (dim order
0,1,2,3) while the legacy flow's program takes a channels-last input, so the target computes on a
channel-scrambled input. The gaps show it where it starts: the input quantize is the first divergence."""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot, QParam
from backend_core.target.judge.gaps import GapReport, TensorPair, map_to_final, snr_db
from backend_core.target.simulate.uart import parse_uart

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "target"
MODEL = FIXTURES / "tiny_conv_model.py"
UART = FIXTURES / "uart_etdump_tiny_conv_mps3-an547.txt"


def _final() -> GraphSnapshot:
    q = QParam("torch.int8", 0.05, -3, -128, 127)
    nodes = (
        NodeSnapshot("x", "x", "placeholder", "x", "input"),
        NodeSnapshot("q", "q", "call_function", "cortex_m.quantize_per_tensor.default", "quant_boundary",
                     output_qparams=q, debug_handle=1),
        NodeSnapshot("conv", "conv", "call_function", "cortex_m.quantized_conv2d.default", "cmsis_nn",
                     output_qparams=q, debug_handle=4, module_path="conv"),
        NodeSnapshot("alloc", "alloc", "call_function", "memory.alloc", "plumbing"),
        NodeSnapshot("fc", "fc", "call_function", "cortex_m.quantized_linear.default", "cmsis_nn",
                     output_qparams=q, debug_handle=9),
        NodeSnapshot("dq", "dq", "call_function", "cortex_m.dequantize_per_tensor.default", "quant_boundary",
                     debug_handle=9),
    )
    return GraphSnapshot("final", 9, "final", nodes, ())


def _pair(handles, ops, mse, mismatched, dtype="torch.int8") -> TensorPair:
    return TensorPair(tuple(handles), ops, [f"native_call_{o}.out" for o in ops], mse, mse, math.sqrt(mse),
                      2.0 * math.sqrt(mse), mismatched, 16, dtype, (1, 4, 2, 2), 100.0)


def test_mapping_onto_final_node_ids() -> None:
    pairs = [_pair([1], ["q"], 0.0, 0), _pair([4], ["conv"], 4.0, 10),
             _pair([9], ["fc", "dq"], 0.01, 2, dtype="torch.float32"), _pair([77], ["gone"], 1.0, 1)]
    rep = map_to_final(pairs, _final(), "mse")
    assert rep.metric == "MSE"
    q, conv, fc, gone = rep.layers
    assert (q.node_id, q.identical, q.snr_db, q.mse_real) == ("q", True, None, 0.0)
    assert conv.node_id == "conv" and conv.module_path == "conv" and conv.kind == "cmsis_nn"
    assert conv.mse_real == pytest.approx(4.0 * 0.05 ** 2) and conv.snr_db == pytest.approx(10 * math.log10(25))
    # linear + its dequantize share a handle: select the compute node, measure the last op's output
    assert (fc.node_id, fc.measured_node, fc.node_ids, fc.scale) == ("fc", "dq", ["fc", "dq"], None)
    assert gone.node_id is None and rep.unmapped_handles == [77]
    assert rep.first_divergence is conv
    assert rep.worst(1) == [conv]
    d = json.loads(json.dumps(rep.to_dict(), allow_nan=False))       # strict JSON: no inf/nan
    assert d["first_divergence"] == "conv" and d["identical_layers"] == 1
    back = GapReport.from_dict(d)
    assert [g.node_id for g in back.layers] == ["q", "conv", "fc", None]
    text = rep.table(3)
    assert "first divergence (execution order): conv" in text and "quantized_conv2d" in text


def test_snr_edge_cases() -> None:
    assert snr_db(1.0, 0.0) is None and snr_db(0.0, 1.0) is None
    assert snr_db(100.0, 1.0) == pytest.approx(20.0)


def test_match_layout_rereads_bytes_in_the_programs_dim_order() -> None:
    torch = pytest.importorskip("torch")
    from backend_core.target.judge.gaps_inspector import handle_dim_order, match_layout

    host = torch.arange(24, dtype=torch.int8).reshape(1, 2, 3, 4).contiguous(memory_format=torch.channels_last)
    raw = torch.frombuffer(bytearray(host.permute(0, 2, 3, 1).contiguous().numpy().tobytes()),
                           dtype=torch.int8).view(1, 2, 3, 4)                      # what the Inspector builds
    fixed, did = match_layout(raw, (0, 2, 3, 1))
    assert did and torch.equal(fixed, host)
    # the decision comes from the program's dim order, not from the host tensor's strides
    same, did = match_layout(raw, (0, 1, 2, 3))
    assert not did and same is raw
    same, did = match_layout(raw, None)
    assert not did and same is raw
    # (1,16,32,32)-like shapes: the target's NHWC bytes re-read without looking at any host tensor
    t = torch.randint(-128, 127, (1, 16, 8, 8), dtype=torch.int8)
    raw = torch.frombuffer(bytearray(t.permute(0, 2, 3, 1).contiguous().numpy().tobytes()),
                           dtype=torch.int8).view(1, 16, 8, 8)
    assert torch.equal(match_layout(raw, (0, 2, 3, 1))[0], t)
    # a merged handle tuple takes its last handle's order
    assert handle_dim_order((4, 3), {3: (0, 1, 2, 3), 4: (0, 2, 3, 1)}) == (0, 2, 3, 1)
    assert handle_dim_order((9,), {}) is None


def lowered_with_etrecord(work: Path):
    """The .bpte and ETRecord of one lowering: a Job that keeps them (what `cmlens run --etdump` uses)."""
    from backend_core.orchestration.jobs import Job, LowerRequest, execute_job

    res = execute_job(Job(str(MODEL), LowerRequest("cortex-m55", "legacy"), steps=("lower",), keep=("etrecord",),
                      out_dir=str(work)))
    assert res.status == "done", res.error
    return res.record


@pytest.fixture(scope="module")
def recorded_gaps(tmp_path_factory: pytest.TempPathFactory) -> GapReport:
    """Real lowering (ExecuTorch is installed in CI) + the recorded ETDump -> GapReport."""
    pytest.importorskip("executorch")
    from backend_core.target.judge.gaps_inspector import compute_gaps

    work = tmp_path_factory.mktemp("gaps")
    report = parse_uart(UART.read_text())
    assert report.tests and report.tests[0].passed is False            # input-sensitive model: FAIL
    block = report.etdumps[0]
    assert block.complete and set(block.files) == {"etdump.bin", "debug_buffer.bin"}
    (work / "etdump.bin").write_bytes(block.files["etdump.bin"])
    (work / "debug_buffer.bin").write_bytes(block.files["debug_buffer.bin"])
    rec = lowered_with_etrecord(work)
    assert rec.etrecord.is_file() and rec.bpte.stat().st_size > 0
    return compute_gaps(work / "etdump.bin", work / "debug_buffer.bin", rec.etrecord, rec.final, "MSE"), rec


def test_recorded_run_gaps_map_onto_final_graph(recorded_gaps) -> None:
    gaps, rec = recorded_gaps
    ids = {n.id for n in rec.final.nodes}
    assert len(gaps.layers) == 5
    assert all(g.node_id in ids for g in gaps.layers)
    assert [g.target for g in gaps.layers] == [
        "cortex_m.quantize_per_tensor.default", "cortex_m.quantized_conv2d.default",
        "cortex_m.quantized_depthwise_conv2d.default", "cortex_m.quantized_avg_pool2d.default",
        "cortex_m.quantized_linear.default"]
    first = gaps.first_divergence
    assert first is not None and first.target == "cortex_m.quantize_per_tensor.default"
    assert first.mismatched > 0.9 * first.numel                        # scrambled input channels
    assert any(g.layout_fixed for g in gaps.layers)
    for g in gaps.layers:
        assert g.gap == pytest.approx(g.mse, rel=1e-4, abs=1e-6)       # Inspector's MSE after our preprocessing
    json.dumps(gaps.to_dict(), allow_nan=False)


def test_recorded_run_gaps_explained_by_nchw_input(recorded_gaps) -> None:
    """Re-run the host graph on the input read the way the target read it (NCHW bytes as NHWC):
    every conv output then matches the target bit for bit, so the gaps are the input, not CMSIS-NN."""
    torch = pytest.importorskip("torch")
    _, rec = recorded_gaps
    import executorch.backends.cortex_m.passes  # noqa: F401
    from executorch.devtools import Inspector
    from executorch.devtools.inspector._intermediate_output_capturer import IntermediateOutputCapturer

    work = rec.etrecord.parent
    insp = Inspector(etdump_path=str(work / "etdump.bin"), etrecord=str(rec.etrecord),
                     debug_buffer_path=str(work / "debug_buffer.bin"))
    df = insp.calculate_numeric_gap(distance="MSE", reference_graph="edge_dialect_exported_program")
    x = insp._etrecord._representative_inputs[0]
    n, c, h, w = x.shape
    scrambled = x.contiguous().reshape(n, h, w, c).permute(0, 3, 1, 2)
    cap = IntermediateOutputCapturer(insp._etrecord.edge_dialect_program.module()).run_and_capture(scrambled)
    row = df.iloc[1]                                                   # the first conv
    host = cap[tuple(row["aot_debug_handle"])]
    host = host[0] if isinstance(host, (list, tuple)) else host
    rt = row["runtime_intermediate_output"]
    rt = rt[0] if isinstance(rt, (list, tuple)) else rt
    n, c, h, w = host.shape
    assert torch.equal(host, rt.reshape(n, h, w, c).permute(0, 3, 1, 2))


# --- a passing run after the bundle layout fix: every layer must be bit-identical ---------------------
UART_PASS = FIXTURES / "uart_etdump_tiny_conv_pass_mps3-an547.txt"


@pytest.fixture(scope="module")
def passing_run(tmp_path_factory: pytest.TempPathFactory):
    """The same tiny model, run on QEMU M55 from a .bpte with channels-last input bytes (PASS, error 0)."""
    pytest.importorskip("executorch")
    work = tmp_path_factory.mktemp("gaps_pass")
    report = parse_uart(UART_PASS.read_text())
    assert report.tests and report.tests[0].passed is True
    for name, data in report.etdumps[0].files.items():
        (work / name).write_bytes(data)
    return work, lowered_with_etrecord(work)


def test_etrecord_runs_the_host_graph_on_the_logical_inputs(passing_run) -> None:
    """The .bpte carries NHWC bytes under the NCHW shape (for the target); the ETRecord's representative
    inputs, which the Inspector runs the host graph on, must be the real tensors (was: the scrambled
    bundle tensors, so every layer after the input quantize showed a gap on a 3-channel resnet8)."""
    torch = pytest.importorskip("torch")
    from executorch.devtools.etrecord import parse_etrecord

    import executorch.backends.cortex_m.passes  # noqa: F401
    _, rec = passing_run
    spec = importlib.util.spec_from_file_location("tiny_conv_model", MODEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = mod.get_example_inputs()[0]
    rep = parse_etrecord(str(rec.etrecord))._representative_inputs[0]
    assert torch.equal(rep, x)


def test_passing_run_is_bit_identical_on_every_layer(passing_run) -> None:
    from backend_core.target.judge.gaps_inspector import compute_gaps

    work, rec = passing_run
    gaps = compute_gaps(work / "etdump.bin", work / "debug_buffer.bin", rec.etrecord, rec.final, "MSE")
    assert len(gaps.layers) == 5
    assert [(g.target.split(".")[1], g.mismatched) for g in gaps.layers] == [
        ("quantize_per_tensor", 0), ("quantized_conv2d", 0), ("quantized_depthwise_conv2d", 0),
        ("quantized_avg_pool2d", 0), ("quantized_linear", 0)]
    assert gaps.first_divergence is None
    assert [g.layout_fixed for g in gaps.layers] == [True, True, True, True, False]   # NHWC 4-D, 2-D fc


def test_a_wrong_requantize_multiplier_still_shows_a_gap(passing_run, tmp_path: Path) -> None:
    """Same target run, host program with the first conv's requantize multipliers corrupted: the gap
    must start at that conv (the layout fix does not paper over real differences)."""
    torch = pytest.importorskip("torch")
    from executorch.devtools.etrecord import parse_etrecord

    import executorch.backends.cortex_m.passes  # noqa: F401
    from backend_core.target.judge.gaps_inspector import compute_gaps

    work, rec = passing_run
    record = parse_etrecord(str(rec.etrecord))
    ep = record.edge_dialect_program
    conv = next(n for n in ep.graph_module.graph.nodes if "quantized_conv2d" in str(n.target))
    mult = conv.args[8]
    target = ep.graph_signature.inputs_to_lifted_tensor_constants.get(mult.name) or \
        ep.graph_signature.inputs_to_buffers.get(mult.name) or ep.graph_signature.inputs_to_parameters[mult.name]
    table = ep.constants if target in ep.constants else ep.state_dict
    t = table[target]
    with torch.no_grad():                                              # 0.75x the scale, in place
        t.copy_((t.to(torch.int64) * 3 // 4).to(t.dtype))
    bad = tmp_path / "etrecord_bad.bin"
    record.save(str(bad))
    gaps = compute_gaps(work / "etdump.bin", work / "debug_buffer.bin", bad, rec.final, "MSE")
    first = gaps.first_divergence
    assert gaps.layers[0].identical                                    # the input quantize is untouched
    assert first is not None and first.target == "cortex_m.quantized_conv2d.default"
    assert first.mismatched > first.numel // 4
