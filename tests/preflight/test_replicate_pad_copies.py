"""--keep-going's dim-order copies on a replicate pad (issue 46, MONAI BasicUNet): torch.export writes
`F.pad(x, p, "replicate")` as aten.index.Tensor, which on a channels-last tensor writes the dim orders
(0, 3, 2, 1) and (0, 2, 1, 3). op_index.cpp refuses them (the pre-flight's dim-order-mismatch); copying the
index's input to that order, as for any other mismatch, made a `_clone_dim_order` to_executorch cannot
serialise ("Failed to map a given dim_order: [0, 3, 2, 1] to a torch.memory_format"), so the kept-going
lowering failed. Such an op now reads and writes contiguous tensors, with no copy back to an order no copy
can make."""
from __future__ import annotations

from pathlib import Path

from backend_core.analyses.preflight import certain, findings_of
from backend_core.orchestration.jobs.steps.lower import lower_source
from backend_core.lowering.lower import LowerOutputs
from backend_core.stages.pipeline.stages import PipelineOptions
from tests.preflight.test_preflight_rules import lowered

PAD = str(Path(__file__).resolve().parent / "models" / "replicate_pad_cat.py")


def test_the_replicate_pads_index_ops_are_predicted() -> None:
    res = lowered(PAD)
    index = [f for f in certain(res.preflight) if res.final.node(f.node).target == "aten.index.Tensor"]
    assert [f.rule for f in index] == ["dim-order-mismatch"] * 2, [f.line() for f in res.preflight]
    assert "out is dim order (0, 3, 2, 1)" in index[0].message


def test_keep_going_serialises_the_mended_program_with_no_finding_left() -> None:
    res = lower_source(PAD, PipelineOptions(calib=2, keep_going=True), use_cache=False, outputs=LowerOutputs(pte=True))
    assert res.status == "done", res.error
    rec = res.verdicts["rewrites"]["dim_order_copies"]
    assert "dim-order-mismatch" in rec["rules"] and rec["copies"] >= 1
    assert res.blobs.get("model.pte")
    assert not certain(findings_of(res.final)), [f.line() for f in findings_of(res.final)]


def test_the_mended_program_passes_on_qemu_m55_bit_exact(tmp_path: Path) -> None:
    from tests.helpers.target_run import run_on_m55_or_skip

    r = run_on_m55_or_skip(PAD, tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
    assert "bit for bit" in r.summary()
