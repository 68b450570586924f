"""digits_cnn, the zoo's trained model, through the evaluate step on its whole held-out split."""
from __future__ import annotations

import json
from dataclasses import replace

from .conftest import Evaluated, train_script


def test_float_accuracy_meets_the_training_scripts_threshold(digits: Evaluated) -> None:
    ev = digits.result.steps["evaluate"]
    assert ev["samples"] == 450 and ev["task"] == "classification"
    assert ev["data"] == "get_eval_data() of zoo entry digits_cnn"
    assert ev["models"]["float"]["top1"] >= train_script().MIN_FLOAT_ACCURACY
    assert ev["models"]["float"]["agreement"] == 1.0


def test_lowered_accuracy_is_close_to_float(digits: Evaluated) -> None:
    ev = digits.result.steps["evaluate"]
    f, q, low = (ev["models"][k] for k in ("float", "fake_quant", "lowered"))
    assert abs(low["top1"] - f["top1"]) <= 0.01 and abs(q["top1"] - f["top1"]) <= 0.01
    assert low["agreement"] >= 0.98 and low["agreement_with_fake_quant"] >= 0.99
    assert len(ev["flipped"]) == ev["flips"]["count"] == sum(g["flips"] for g in ev["flips"]["by_layer"])
    out = ev["outputs"][0]
    assert out["shape"] == [1, 10]
    assert out["lowered_vs_float"]["cosine"] > 0.99 and 0 < out["lowered_vs_float"]["l2_relative"] < 0.1
    # the lowered program is not the fake-quant model bit for bit, but close to it
    assert out["lowered_vs_fake_quant"]["sqnr_db"] > out["lowered_vs_float"]["sqnr_db"]
    assert sum(map(sum, low["confusion"])) == 450 and low["correct"] == round(low["top1"] * 450)


def test_it_never_lowers_twice_and_its_json_is_the_jobs(digits: Evaluated) -> None:
    from backend_core.orchestration.jobs import Job
    from backend_core.orchestration.jobs.result import JobResult
    from backend_core.orchestration.jobs.spec import EvaluateOptions

    res = digits.result
    assert res.steps["lower"]["from_cache"] is False            # kept stages: a live lowering, once
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert d["steps"]["evaluate"]["models"]["lowered"]["top1"] == res.steps["evaluate"]["models"]["lowered"]["top1"]
    back = JobResult.from_dict(d)
    assert back.job == res.job and back.job.evaluate == EvaluateOptions()
    job = Job("digits_cnn", steps=("lower", "evaluate"), evaluate=EvaluateOptions(data="/d", limit=5, flips=False))
    assert Job.from_dict(json.loads(json.dumps(job.to_dict()))) == job
    assert job.key() != replace(job, evaluate=EvaluateOptions()).key()
    plain = Job("digits_cnn", steps=("lower", "memory"))
    assert replace(plain, evaluate=EvaluateOptions(limit=5)).key() == plain.key()    # no evaluate step: same key
    assert "evaluate" not in plain.key()


def test_the_lowered_run_matches_the_final_program_run_by_hand(digits: Evaluated) -> None:
    """The 'lowered' model is the final edge program itself (final_ep.module()(x))."""
    import torch

    from backend_core.analyses.accuracy import load_eval_set

    p = digits.programs
    es = load_eval_set(p.loaded, p.example_inputs, limit=3)
    preds = digits.result.steps["evaluate"]["models"]["lowered"]["predictions"][:3]
    with torch.no_grad():
        by_hand = [int(p.lowered.module()(*s.inputs).argmax()) for s in es.samples]
    assert by_hand == preds
