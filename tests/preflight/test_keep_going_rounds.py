"""--keep-going on braindecode ATCNet (issue 46): 8 rounds for 10 quarantined ops, then a program whose
bundle could not be built (`cortex_m.quantized_div: expected int8 or int16 inputs, got torch.float32`).
- one round per cause: a failing op's twins in the other instances of its repeated block are taken out with it;
- a cortex_m div fed a float tensor is a pre-flight finding (the target's kernel aborts in the same validator
  as add/mul), so --keep-going leaves it in float and the bundle's host reference runs;
- without --keep-going, a bundle that cannot be built names that finding and its fix."""
from __future__ import annotations

from pathlib import Path

from backend_core.orchestration.jobs.steps.lower import lower_source
from backend_core.stages.fallback.repeated_blocks import block_twins
from backend_core.lowering.lower import LowerOutputs, lower
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.analyses.preflight import certain, findings_of
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot

DIV = str(Path(__file__).resolve().parent / "models" / "float_operand_mul.py") + ":div"


def _n(name: str, target: str, path: str, kind: str = "MHA") -> NodeSnapshot:
    return NodeSnapshot(name, name, "call_function", target, "op", module_path=path, module_type=kind)


def test_block_twins_are_the_same_op_at_the_same_place_of_each_instance() -> None:
    nodes = []
    for i in range(3):                          # ATCNet: attention_blocks.{i}.mha, two bmm each
        nodes += [_n(f"bmm_{2 * i}", "aten.bmm.default", f"attention_blocks.{i}.mha"),
                  _n(f"bmm_{2 * i + 1}", "aten.bmm.default", f"attention_blocks.{i}.mha")]
    nodes += [_n("bmm_9", "aten.bmm.default", "head", "Linear"),       # not in a repeated block
              _n("bmm_10", "aten.bmm.default", "other.0.mha", "MHA")]  # another list of the class
    snap = GraphSnapshot("quantized", 1, "quantize", tuple(nodes), ())
    assert block_twins(snap, "bmm_1") == ["bmm_3", "bmm_5"]
    assert block_twins(snap, "bmm_2") == ["bmm_0", "bmm_4"]
    assert block_twins(snap, "bmm_9") == [] and block_twins(snap, "nope") == [] and block_twins(None, "bmm_1") == []


def test_a_float_dividend_of_a_cortex_m_div_is_kept_in_float_and_the_bundle_builds() -> None:
    res = lower_source(DIV, PipelineOptions(calib=2, keep_going=True), use_cache=False, outputs=LowerOutputs(bpte=True))
    assert res.status == "done", res.error
    assert "model.bpte" in res.blobs
    quarantined = res.report()["quantizer"]["quarantined"]
    assert quarantined["div"]["round"] == 1 and "cmsis-needs-int8" in quarantined["div"]["via"]
    assert not certain(findings_of(res.final))
    assert not [n for n in res.final.nodes if n.target == "cortex_m.quantized_div.default"]


def test_without_keep_going_the_failed_bundle_names_the_finding() -> None:
    res = lower(DIV, PipelineOptions(target="cortex-m55", calib=2), use_cache=False, outputs=LowerOutputs(bpte=True))
    found = [f for f in certain(res.preflight) if f.op == "cortex_m.quantized_div.default"]
    assert found and found[0].rule == "cmsis-needs-int8" and "self is float32" in found[0].message
    assert res.status == "failed" and res.error["stage"] == "bundled program"
    assert "expected int8 or int16 inputs, got torch.float32" in res.error["message"]
    assert "will fail on the target" in res.error["hint"] and "[cmsis-needs-int8]" in res.error["hint"]
    assert "--keep-going" in res.error["hint"]


def test_a_cortex_m_pool_fed_a_float_tensor_is_predicted() -> None:
    """MONAI DenseNet kept going aborted on QEMU M55: `quantized_avg_pool2d_out: tensors must be int8`
    (cortex_m_ops_common.h:214), its input a float relu after the norm --keep-going ran in float."""
    from backend_core.analyses.preflight.cortex_m_rules import int8_operand_findings
    from backend_core.analyses.preflight.program_view import Call, ProgramView, Tensor

    def view(dtype: str) -> ProgramView:
        x = Tensor(0, dtype, (1, 8, 4, 4), (0, 2, 3, 1))
        out = Tensor(1, "int8", (1, 8, 1, 1), (0, 2, 3, 1))
        call = Call(0, "cortex_m::quantized_avg_pool2d", "out", [0, 1], outs=[1], node="pool",
                    target="cortex_m.quantized_avg_pool2d.default", names=("input",))
        return ProgramView([x, out], [5, 5], [call], [0], [1])

    found = int8_operand_findings(view("float32"))
    assert [f.rule for f in found] == ["cmsis-needs-int8"] and found[0].node == "pool"
    assert found[0].source.endswith("cortex_m_ops_common.h:214") and "input is float32" in found[0].message
    assert int8_operand_findings(view("int8")) == []
