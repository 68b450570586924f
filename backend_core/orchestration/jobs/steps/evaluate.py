"""The `evaluate` step: accuracy of the job's lowering on labelled data (backend_core.analyses.accuracy).

It runs the lower step's own live programs (the lower step keeps them when the job wants `evaluate`),
never a second lowering: float, PT2E fake-quant and the final program on the host, on the model's
get_eval_data() or the `--data` folder, in this process (the one that loaded the user's file)."""
from __future__ import annotations

import threading
from typing import Any, Callable

from backend_core.common.errors import BadInputError, CmlensError


def evaluate_step(job: Any, res: Any, emit: Callable[[str, dict[str, Any]], None],
                  cancel: threading.Event) -> None:
    """res.steps["evaluate"] = the evaluation of res.lowering (see backend_core.analyses.accuracy.evaluate)."""
    from backend_core.analyses.accuracy import EvalPrograms, evaluate, load_eval_set

    low = res.lowering
    if low is None or low.status != "done":
        raise CmlensError("Nothing to evaluate: the lower step did not finish.", "See the lower step's error.")
    if job.reads_program or getattr(low, "stage_programs", None) is None:
        raise BadInputError(f"{job.model} is a ready program: it has no float or fake-quant model to compare.",
                            "Evaluate the model source (zoo name, model.py or .pt2) instead.")
    opts = job.evaluate

    def say(text: str) -> None:
        emit("status", {"text": text})

    programs = EvalPrograms.from_lowering(low)
    say("loading the evaluation data")
    data = load_eval_set(programs.loaded, programs.example_inputs, opts.data, limit=opts.limit,
                         calibration=programs.calibration)
    for w in data.warnings:
        emit("line", {"stream": "cmlens", "line": f"warning: {w}"})
    res.steps["evaluate"] = evaluate(programs, data, flips=opts.flips, threshold_db=opts.threshold_db,
                                     reference_samples=opts.reference_samples, progress=say,
                                     is_cancelled=cancel.is_set)
    if opts.on_target:
        from backend_core.orchestration.jobs.target_run.evaluate import evaluate_on_target

        evaluate_on_target(job, low, data, res.steps["evaluate"], opts.on_target, emit, cancel)
