"""--keep-going's quarantine (issue 26) on small models that plain ExecuTorch 1.5.1 gets wrong:
- torch.ao.nn.quantizable.LSTM (ExecuTorch's own case lstm_quantizable) fails AtenToCortexMPass
  ("quantized_activation input must be int8"): the activations are left in float, one round each;
- linear(x) * torch.zeros(...) lowers, but its cortex_m add/mul get a float operand and the runner
  aborts on the target (pre-flight rule cmsis-needs-int8): keep-going leaves them in float too, and
  that lowering PASSes on QEMU M55 (opt-in: needs an ExecuTorch checkout).
Each quarantined op is a pass_failure fallback with ExecuTorch's words and its float island's cost."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.target_run import run_on_m55_or_skip

from backend_core.stages.fallback.changed import keep_going_summary
from backend_core.stages.pipeline.stages import PipelineOptions

REPO = Path(__file__).resolve().parents[2]
LSTM = str(REPO / "tests" / "fixtures" / "models" / "quantizable_lstm.py") + ":model"
ZEROS = str(REPO / "tests" / "preflight" / "models" / "float_operand_mul.py")


def _kept(source: str) -> Any:
    from backend_core.orchestration.jobs.steps.lower import lower_source

    return lower_source(source, PipelineOptions(calib=2, keep_going=True), use_cache=False)


def test_quantizable_lstm_activations_are_left_in_float_with_their_cost() -> None:
    res = _kept(LSTM)
    assert res.status == "done", res.error
    quarantined = res.verdicts["quarantined"]
    failed_in_pass = {k for k, v in quarantined.items() if v["stage"] == "AtenToCortexMPass"}
    assert failed_in_pass == {"sigmoid", "sigmoid_1", "tanh", "sigmoid_2"}
    # the four gates read pieces of one float chunk: the diagnosis names the cause and takes them out in
    # one round (they used to take four); the later cell ops, fed otherwise, then lower as int8
    first = quarantined["sigmoid"]
    assert {quarantined[k]["round"] for k in failed_in_pass} == {first["round"]}
    assert "still holds float32" in first["cause"] and "aten.chunk.default `chunk`" in first["cause"]
    assert {v["via"] for k, v in quarantined.items() if k in failed_in_pass and k != "sigmoid"} == {
        "it fails the same check as `sigmoid`"}
    pf = [n.fallback for n in res.fallbacks() if n.fallback.category == "pass_failure"]
    assert len(pf) >= 4
    for fb in pf:
        assert "not what ExecuTorch produces" in fb.message
        assert "Cost: a float island" in fb.message and "B in float32 instead of" in fb.message
    assert "unknown" not in [n.fallback.category for n in res.fallbacks()]
    assert "NOT what plain ExecuTorch produces: plain ExecuTorch fails" in keep_going_summary(res.verdicts)


def test_an_op_the_target_would_abort_on_is_left_in_float() -> None:
    from backend_core.analyses.preflight import findings_of

    res = _kept(ZEROS)
    assert res.status == "done", res.error
    quarantined = res.verdicts["quarantined"]
    assert set(quarantined) == {"mul", "add"}
    assert all(v["stage"] == "pre-flight" and "cmsis-needs-int8" in v["via"] for v in quarantined.values())
    assert not [f for f in findings_of(res.final) if f.certain]
    ops = [n.target for n in res.final.nodes]
    assert not any("quantized_mul" in t or "quantized_add" in t for t in ops), ops
    msgs = [n.fallback.message for n in res.fallbacks() if n.fallback.category == "pass_failure"]
    assert msgs and all("the target would abort" in m for m in msgs)
    assert "would abort or give wrong values on the target" in keep_going_summary(res.verdicts)


@pytest.mark.slow
def test_the_kept_lowering_passes_on_qemu_m55(tmp_path: Path) -> None:
    r = run_on_m55_or_skip(ZEROS, tmp_path, keep_going=True)
    assert r.outcome == "PASS" and "bit for bit" in r.summary(), r.summary()
