"""Pre-flight rules on programs lowered by the real ExecuTorch pipeline: the two target crashes of
issue 9 are predicted on the node that crashed, the suggested fix clears the finding, models that
PASS on QEMU get no certain finding, and the registry / bundle rules read real .pte/.bpte bytes."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend_core.lowering.lower import LowerOutputs, LoweringResult, lower
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.analyses.preflight import WILL_FAIL, Finding, certain, check_snapshot, findings_of
from backend_core.analyses.preflight.dim_order import is_channels_last, is_contiguous, same_dim_order, strides
from backend_core.analyses.preflight.kernel_rules import schema_arg_names
from backend_core.analyses.preflight.program_rules import bundle_output_layouts

MODELS = Path(__file__).resolve().parent / "models"
GATE = str(MODELS / "gate_cat_softmax.py")
GELU_UP = str(MODELS / "gelu_upsample.py")
_RESULTS: dict[str, LoweringResult] = {}


def lowered(source: str) -> LoweringResult:
    if source not in _RESULTS:
        res = lower(source, PipelineOptions(target="cortex-m55"), use_cache=False,
                    outputs=LowerOutputs(pte=True, bpte=True, edge_program=True))
        assert res.status == "done", res.error
        _RESULTS[source] = res
    return _RESULTS[source]


def test_dim_order_predicates_match_the_runtime() -> None:
    # A 0-D or 1-D tensor is contiguous but never channels-last: mixed with a channels-last 4-D
    # tensor, tensors_have_same_dim_order fails (a broadcast bias on an NHWC activation).
    assert is_contiguous(()) and not is_channels_last(())
    assert is_channels_last((0, 2, 3, 1)) and is_channels_last((0, 2, 3, 4, 1))
    assert not is_channels_last((0, 3, 2, 1)) and not is_channels_last((0, 2, 1))
    assert same_dim_order([(0, 2, 3, 1), (0, 2, 3, 1)])
    assert not same_dim_order([(0, 2, 3, 1), (0,)])
    assert not same_dim_order([(0, 2, 3, 1), (0, 1, 2, 3)])
    assert strides((1, 8, 4, 4), (0, 2, 3, 1)) == (128, 1, 32, 8)
    # the bundle check compares strides literally: even a 1-channel tensor differs, only all-1 sizes agree
    assert strides((1, 1, 4, 4), (0, 2, 3, 1)) != strides((1, 1, 4, 4), (0, 1, 2, 3))
    assert strides((1, 1, 1, 1), (0, 2, 3, 1)) == strides((1, 1, 1, 1), (0, 1, 2, 3))


def test_schema_argument_names() -> None:
    assert schema_arg_names("aten::cat(Tensor[] tensors, int dim=0) -> Tensor") == ["tensors", "dim"]
    assert schema_arg_names("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") == [
        "self", "other", "alpha"]
    assert schema_arg_names("aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, "
                            "float[]? scale_factors) -> Tensor") == ["input", "output_size", "scale_factors"]


def test_softmax_after_cat_exp_is_predicted_on_the_softmax_node() -> None:
    """Issue 9 crash 2 (op_softmax.cpp:40 on QEMU M55): exp keeps the channels-last layout of the cat,
    softmax's output is contiguous."""
    res = lowered(GATE)
    found = certain(res.preflight)
    assert [f.rule for f in found] == ["layout-ignored", "dim-order-mismatch"], [f.line() for f in res.preflight]
    f = found[1]
    node = res.final.node(f.node)
    assert node is not None and node.target == "aten._softmax.default"
    assert f.certainty == WILL_FAIL
    assert f.source == "kernels/portable/cpu/op_softmax.cpp:40"
    assert "self is channels-last (0, 2, 3, 1)" in f.message and "out is contiguous (0, 1, 2, 3)" in f.message
    assert any("%aten_exp_default" in e for e in f.evidence)
    assert ".contiguous()" in f.fix
    # the findings ride on the final snapshot: through the JSON report and back
    report = res.report()
    assert [d["rule"] for d in report["preflight"]] == ["layout-ignored", "dim-order-mismatch"]
    assert Finding.from_dict(report["preflight"][1]) == f


def test_channels_last_cat_gives_wrong_values() -> None:
    """op_cat.cpp:54 sizes its copies by the logical shape: a channels-last cat along dim 1 ran without an
    error on QEMU M55 and gave scrambled values (the memcpy emulated on the host matched the target's
    outputs bit for bit); with contiguous inputs the same model PASSes bit-exact."""
    res = lowered(GATE)
    f = certain(res.preflight)[0]
    assert f.rule == "layout-ignored" and f.source == "kernels/portable/cpu/op_cat.cpp:54"
    assert res.final.node(f.node).target == "aten.cat.default"
    assert "concatenating along dim 1" in f.message and "tensors are channels-last (0, 2, 3, 1)" in f.message


def test_the_snapshot_dim_orders_are_the_pte_dim_orders() -> None:
    """The rule reads dim orders from the final snapshot; the runtime reads them from the .pte."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    res = lowered(GATE)
    plan = deserialize_pte_binary(res.blobs["model.pte"]).program.execution_plan[0]
    softmax = [ins.instr_args for ch in plan.chains for ins in ch.instructions
               if hasattr(ins.instr_args, "op_index")
               and plan.operators[ins.instr_args.op_index].name == "aten::_softmax"]
    assert len(softmax) == 1
    args = softmax[0].args
    pte_in, pte_out = plan.values[args[0]].val.dim_order, plan.values[args[-1]].val.dim_order
    node = res.final.node(certain(res.preflight)[1].node)
    src = res.final.node(next(e.src for e in res.final.edges if e.dst == node.id and e.arg_index == 0))
    assert (tuple(pte_in), tuple(pte_out)) == (src.dim_order, node.dim_order) == ((0, 2, 3, 1), (0, 1, 2, 3))


def test_the_suggested_fix_clears_the_finding() -> None:
    res = lowered(f"{GATE}:fixed")
    assert certain(res.preflight) == [], [f.line() for f in res.preflight]
    assert any(n.target.startswith("dim_order_ops.") for n in res.final.nodes)


def test_channels_last_output_bundle() -> None:
    """Issue 9 crash 1: a channels-last output bundled contiguous aborts the runner's BundleIO check.
    cmlens' own .bpte carries the method's dim order (no finding); ExecuTorch's stock BundledProgram
    stores it contiguous, and the rule predicts the abort on the node feeding the output."""
    res = lowered(GELU_UP)
    assert [f.rule for f in res.preflight if f.certain] == []
    [(_, sizes, bundled, method)] = bundle_output_layouts(res.blobs["model.bpte"])
    assert sizes == [1, 8, 16, 16] and bundled == method == [0, 2, 3, 1]
    found = check_snapshot(res.final, bundle=stock_bundle(res))
    assert [f.rule for f in found] == ["bundle-output-dim-order"]
    f = found[0]
    assert f.certain and f.source == "devtools/bundled_program/bundled_program.cpp:188"
    out = next(n for n in res.final.nodes if n.fx_op == "output")
    assert any(e.src == f.node and e.dst == out.id for e in res.final.edges)
    assert "channels-last (0, 2, 3, 1)" in f.message and "contiguous (0, 1, 2, 3)" in f.message


def stock_bundle(res: LoweringResult) -> bytes:
    """The .bpte ExecuTorch's stock BundledProgram writes for `res` (expected outputs stored contiguous)."""
    import torch
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer

    from backend_core.stages.pipeline.program_files import _executorch_manager

    pipe = res.pipeline
    with torch.no_grad():
        expected = pipe.quantized_module(*pipe.example_inputs)
    return bytes(serialize_from_bundled_program_to_flatbuffer(BundledProgram(
        _executorch_manager(pipe.final_program),
        [MethodTestSuite("forward", [MethodTestCase(inputs=list(pipe.example_inputs),
                                                     expected_outputs=[expected])])])))


def _wheel_root() -> Path:
    import executorch

    return Path(next(iter(executorch.__path__)))


def test_registry_rule_names_the_missing_kernel_and_its_node(tmp_path: Path) -> None:
    """Against the installed package's own kernel YAMLs nothing is missing; against a checkout
    whose portable YAML lacks _softmax, the softmax node is named before any build."""
    from backend_core.target.build.ops import OP_YAMLS

    res = lowered(GATE)
    assert [f for f in check_snapshot(None, program=res.blobs["model.pte"], et_root=_wheel_root())] == []

    for rel in OP_YAMLS.values():
        dst = tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_wheel_root() / rel, dst)
    yaml = tmp_path / OP_YAMLS["portable"]
    text = yaml.read_text()
    start = text.index("- op: _softmax.out")
    end = text.index("- op:", start + 5)
    yaml.write_text(text[:start] + text[end:])
    found = check_snapshot(res.final, program=res.blobs["model.pte"], et_root=tmp_path)
    missing = [f for f in found if f.rule == "missing-kernel"]
    assert len(missing) == 1 and missing[0].op == "aten::_softmax.out" and missing[0].certain
    assert res.final.node(missing[0].node).target == "aten._softmax.default"
    assert "Missing operator: aten::_softmax.out" in missing[0].message


@pytest.mark.parametrize("model", ["ds_cnn", "layernorm_mlp", "maxpool_ceil"])
def test_models_that_pass_on_qemu_have_no_certain_finding(model: str) -> None:
    """ds_cnn, layernorm_mlp PASSed on QEMU M55 (FACTS.md); maxpool_ceil keeps a portable int8 max pool,
    which the kernel's REALHBF16 switch handles."""
    res = lower(model, PipelineOptions(target="cortex-m55"), use_cache=False)
    assert res.status == "done"
    assert certain(findings_of(res.final)) == [], [f.line() for f in findings_of(res.final)]


def test_conv3d_on_the_portable_conv_kernel_is_predicted() -> None:
    """Found by conformance (ops.test_conv:conv3d crashed on QEMU M55 at kernel_ops_util.cpp:394)."""
    res = lowered(str(MODELS / "conv3d.py"))
    found = certain(res.preflight)
    assert [f.rule for f in found] == ["unsupported-rank"], [f.line() for f in res.preflight]
    assert found[0].source == "kernels/portable/cpu/util/kernel_ops_util.cpp:394"
    assert res.final.node(found[0].node).target == "aten.convolution.default"
    assert "input is 5-D [1, 2, 4, 6, 6]" in found[0].message


def test_html_report_lists_the_findings(tmp_path: Path) -> None:
    from backend_core.analyses.report.html_report import render_html

    page = render_html(lowered(GATE).report(), with_graphs=False)
    assert "Pre-flight: 2 finding(s)" in page and "dim-order-mismatch" in page and "layout-ignored" in page
    assert "kernels/portable/cpu/op_softmax.cpp:40" in page


def test_ops_the_runner_build_does_not_select_are_predicted() -> None:
    """The `.contiguous()` fix adds dim_order_ops::_clone_dim_order: the checkout has its kernel, and the
    rule follows what cmlens' runner build registers (found on QEMU: "kernel
    'dim_order_ops::_clone_dim_order.out' not found", OperatorMissing 0x14)."""
    from backend_core.target.build.runner import portable_ops

    res = lowered(f"{GATE}:fixed")
    found = check_snapshot(res.final, program=res.blobs["model.pte"], et_root=_wheel_root())
    clone = "dim_order_ops::_clone_dim_order.out"
    selected = clone in portable_ops([clone])
    mine = [f for f in found if f.op == clone]
    assert [f.rule for f in mine] == ([] if selected else ["kernel-not-selected"] * 2)   # one per cat input
    for f in mine:
        assert res.final.node(f.node).target.startswith("dim_order_ops._clone_dim_order")


def test_transpose_conv_with_stride_and_padding_may_give_wrong_numbers() -> None:
    """A measured rule (conformance on QEMU M55): a "may fail", so `cmlens run` still runs it."""
    res = lowered(str(MODELS / "conv_transpose.py"))
    [f] = [f for f in res.preflight if f.rule == "transpose-conv-stride-padding"]
    assert f.certainty == "may fail" and not certain(res.preflight)
    assert res.final.node(f.node).target == "cortex_m.quantized_transpose_conv2d.default"
    assert "stride [2, 2] and padding [1, 1]" in f.message
