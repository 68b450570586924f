"""One keep-going round per cause on timm MobileOne's `out += identity_out` (a 0-d zero): every such add
fails AtenToCortexMPass's read of input_qparams[1] and is named as failing the same check, so --keep-going
leaves them all in float in one round (mobileone_s0 paid one 3-minute round per add before)."""
from __future__ import annotations

from pathlib import Path

from backend_core.stages.pipeline.stages import PipelineOptions

MODEL = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "zero_identity.py") + ":model"


def test_every_add_with_an_unquantized_zero_goes_in_one_round() -> None:
    from backend_core.orchestration.jobs.steps.lower import lower_source

    failed = lower_source(MODEL, PipelineOptions(calib=2), use_cache=False)
    assert failed.status == "failed" and failed.error["stage"] == "AtenToCortexMPass", failed.error
    f = failed.error["failure"]
    assert "input_qparams" in f["check"] and "has none" in f["cause"]
    assert len(f["same_failure"]) == 2, f["same_failure"]            # the other two blocks' adds
    kept = lower_source(MODEL, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert kept.status == "done", kept.error
    q = kept.verdicts["quarantined"]
    assert len(q) == 3 and {why["round"] for why in q.values()} == {1}


def test_the_second_round_reuses_the_calibration_and_gets_the_same_program(monkeypatch) -> None:
    """Round 2 only quarantines the adds: every observer sees the same float values as in round 1, so the
    observers round 1 had keep their calibration and qparams (only the adds' new output observers calibrate)
    and the program is the one a fresh calibration gives, qparam for qparam."""
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.lowering.lower.entry import LowerHooks, lower
    from backend_core.stages.pipeline.calibration_memo import CalibrationMemo

    said: list[str] = []
    kept = lower(MODEL, PipelineOptions(calib=2, keep_going=True), use_cache=False, hooks=LowerHooks(on_status=said.append))
    assert kept.status == "done", kept.error
    reused = [s for s in said if "reused from the earlier round" in s]
    assert len(reused) == 1 and "calibrating the 3 new ones" in reused[0], said     # the 3 adds' outputs
    monkeypatch.setattr(CalibrationMemo, "load", lambda self, prepared, keys: [])   # calibrate every round
    monkeypatch.setattr(CalibrationMemo, "memoize_qparams", lambda self, prepared, keys: None)
    fresh = lower_source(MODEL, PipelineOptions(calib=2, keep_going=True), use_cache=False)

    def qparams(res):
        return {n.id: (n.output_qparams, n.input_qparams, n.requant) for n in res.final.nodes}
    assert qparams(kept) == qparams(fresh)
