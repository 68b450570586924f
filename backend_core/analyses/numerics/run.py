"""The numerics of one lowering: its kept host-runnable stages (the job's lower step made them with
`keep_stages`) run on the samples, compared layer by layer. Nothing here lowers: a job lowers once
and every step reads that result."""
from __future__ import annotations

from typing import Any

from backend_core.analyses.numerics.analyze import CancelCheck, Progress, RunLabels, Sampling, analyze
from backend_core.analyses.numerics.inputs import InputSpec, load_samples, parse_inputs
from backend_core.analyses.numerics.results import NumericsResult


def samples_for(model: Any, options: Any, inputs: InputSpec | str | int | None) -> tuple[InputSpec, list[tuple]]:
    """The samples in the layout the lowered program takes (the example inputs', or channels-last with
    the channels-last option); BadInputError naming the file for a bad folder."""
    spec = inputs if isinstance(inputs, InputSpec) else parse_inputs(inputs)
    return spec, load_samples(spec, model.inputs_for(options.flow), options.flow, options.channels_last)


def numerics_of(lowering: Any, samples: list[tuple], spec: InputSpec, *,
                progress: Progress | None = None, is_cancelled: CancelCheck | None = None,
                sampling: Sampling = Sampling()) -> NumericsResult:
    """Compare float, fake-quant and every runnable stage of `lowering` (a LoweringResult made with
    keep_stages) on `samples`."""
    opts = lowering.options
    result = analyze(lowering.stage_programs, lowering.snapshots[-1], samples, snapshots=list(lowering.snapshots),
                     labels=RunLabels(lowering.model, opts.target, opts.flow, spec.describe()),
                     progress=progress, is_cancelled=is_cancelled, sampling=sampling)
    result.lowering_seconds = lowering.seconds
    return result
