"""The numerics step: float vs fake-quant vs the lowered program, per layer, on the job's samples. It
reads the lower step's kept stages (a ready .pte has none: said so, exit 2); its samples are checked
against the model as soon as the lower step has loaded it, so a bad folder fails before the lowering."""
from __future__ import annotations

import threading
from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs.result import JobResult
from backend_core.orchestration.jobs.spec import Job

EventCallback = Callable[[str, dict[str, Any]], None]


class NumericsInputs:
    """The samples, loaded when the lower step hands over the loaded model (`on_model`)."""

    def __init__(self, job: Job) -> None:
        from backend_core.analyses.numerics.inputs import parse_inputs

        self.job = job
        self.spec = parse_inputs(job.numerics.inputs)       # a missing folder: exit 2 before any import
        self.samples: list[tuple] | None = None

    def on_model(self, model: Any) -> None:
        from backend_core.analyses.numerics.run import samples_for

        _, self.samples = samples_for(model, self.job.lower.pipeline_options(), self.spec)


def numerics_step(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event,
                  inputs: NumericsInputs) -> None:
    from backend_core.analyses.numerics.analyze import Sampling
    from backend_core.analyses.numerics.run import numerics_of

    low = res.lowering
    if low is None or low.stage_programs is None:
        raise BadInputError(f"{job.model} is a ready program: numerics needs the model it was lowered from.",
                            "Run numerics on the model source (zoo name, model.py or .pt2).")
    if inputs.samples is None:
        inputs.on_model(low.loaded_model)
    assert inputs.samples is not None           # on_model loads them

    def progress(done: int, total: int, text: str) -> None:
        emit("progress", {"phase": "analysis", "done": done, "total": total, "text": text})

    num = numerics_of(low, inputs.samples, inputs.spec, progress=progress, is_cancelled=cancel.is_set,
                      sampling=Sampling(job.numerics.sample_size, job.numerics.local_samples or None))
    res.numerics = num
    res.steps["numerics"] = num.to_dict()


def progress_events(lowering: Callable[[int, int, str], None],
                    analysis: Callable[[int, int, str], None]) -> EventCallback:
    """A lower + numerics job's events as two progress callbacks (done, total, text): the stages while
    it lowers, then the analysis. What the CLI prints and the numerics worker streams."""
    seen = [0]

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "stage":
            seen[0] += 1
            lowering(seen[0], len(data["planned"]), f"lowering: {data['snapshot'].stage}")
        elif kind == "progress":
            analysis(data["done"], data["total"], data["text"])
    return on_event
