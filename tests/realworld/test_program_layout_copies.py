"""--keep-going's last layout workaround (issue 38): dim-order copies made on the lowered program where the
pre-flight found a kernel refusing or misreading its tensors' layout. On each layout rule's own case, one
edit leaves no layout finding, adds no other finding, never reorders a weight, and changes no value of the
program run on the host. (The float-export rewrites come first in --keep-going; these copies are what is
left when none applies: FPN's group norms, Fast-SCNN and SINet on QEMU M55, tests/realworld/test_wave2_corpus.py.)"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend_core.stages.pipeline.stages import PipelineOptions

CASES = Path(__file__).resolve().parents[1] / "preflight" / "models"


def _certain(final: Any) -> set[tuple[str, str]]:
    from backend_core.analyses.preflight import findings_of

    return {(f.rule, f.node) for f in findings_of(final) if f.certain}


@pytest.mark.parametrize("case, rule", [("layer_norm_cl.py", "needs-contiguous"),
                                        ("cat_channels_last.py", "layout-ignored"),
                                        ("pad_channels_last.py", "pad-layout-ignored"),
                                        ("mixed_layout_add.py", "cmsis-ignores-dim-order"),
                                        ("contiguous_mean.py", "cmsis-needs-channels-last"),
                                        ("gate_cat_softmax.py", "dim-order-mismatch")])
def test_one_edit_removes_the_layout_findings_and_changes_no_value(case: str, rule: str) -> None:
    import torch

    from backend_core.orchestration.jobs.steps.lower import lower_source

    from backend_core.lowering.lower import LowerOutputs
    from backend_core.lowering.lower.rounds import preflight_program as _preflight_program
    from backend_core.lowering.lower.layout_copies import copies_on_final

    res = lower_source(str(CASES / case), PipelineOptions(calib=2), use_cache=False, outputs=LowerOutputs(edge_program=True))
    assert res.status == "done", res.error
    before = _certain(res.final)
    assert rule in {r for r, _ in before}, before
    pipe = res.pipeline
    x = pipe.example_inputs
    out_before = pipe.final_program.module()(*x)
    weights = {n.name for n in pipe.final_program.graph.nodes if n.op == "placeholder"
               and n.name not in pipe.final_program.graph_signature.user_inputs}

    fixed = copies_on_final(pipe, res.options.target, res.options.flow, frozenset(), 1,
                            lambda p: _preflight_program(p, None), None, res.blobs["model.pte"])
    assert fixed is not None
    record = fixed[0]["dim_order_copies"]
    assert record["copies"] >= 1 and rule in record["rules"]
    assert _certain(pipe.snapshots[-1]) == set(), _certain(pipe.snapshots[-1])     # none left, none new
    copied = [n.args[0].name for n in pipe.final_program.graph.nodes if "_clone_dim_order" in str(n.target)]
    assert not set(copied) & weights                                                  # packed weights untouched
    out_after = pipe.final_program.module()(*x)
    assert torch.equal(out_before, out_after)


MAX_DIM = str(CASES / "max_dim.py")


def test_a_bare_int_for_an_int_list_is_written_as_the_list() -> None:
    """SINet's `y.max(dim=1)[0]`: ExecuTorch's program holds `amax(x, 1)` and the runtime aborts reading the
    int; --keep-going writes `[1]` in the lowered program in the same round and the pre-flight is clean."""
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.analyses.preflight import findings_of

    plain = lower_source(MAX_DIM, PipelineOptions(calib=2), use_cache=False)
    assert {f.rule for f in findings_of(plain.final) if f.certain} == {"int-list-given-int"}
    kept = lower_source(MAX_DIM, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert kept.status == "done", kept.error
    rec = kept.verdicts["rewrites"]["int_lists_in_program"]
    assert rec["round"] == 1 and rec["nodes"] == ["aten_amax_default"]
    assert not [f for f in findings_of(kept.final) if f.certain]
    amax = kept.final.node("aten_amax_default")
    assert amax is not None and amax.args[1] == "[1]"


@pytest.mark.slow
def test_the_listed_int_passes_on_qemu_m55_bit_exact(tmp_path: Path) -> None:
    from tests.helpers.target_run import run_on_m55_or_skip

    r = run_on_m55_or_skip(MAX_DIM, tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
    assert "bit for bit" in r.summary()
