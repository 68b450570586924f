"""Entry points: lower a model while keeping its runnable stages, then analyse.

`lower_for_numerics` is separate from `analyze` so a caller (a test, the bench) can lower once
and analyse several times, e.g. once more with a deliberately corrupted final program.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..errors import Cancelled
from ..models.loaded import LoadedModel, load_model, parse_model_source
from ..pipeline.stages import PipelineOptions
from ..snapshot.model import GraphSnapshot
from .analyze import Progress, ShouldStop, analyze
from .capture import StageKeeper, StageProgram
from .inputs import InputSpec, load_samples, parse_inputs
from .results import NumericsResult


@dataclass
class LoweredStages:
    stages: list[StageProgram]
    snapshots: list[GraphSnapshot]
    options: PipelineOptions
    model: LoadedModel
    pipeline: Any
    seconds: float

    @property
    def final_snapshot(self) -> GraphSnapshot:
        return self.snapshots[-1]

    @property
    def final_program(self) -> Any:
        return self.stages[-1].program


def lower_for_numerics(model: LoadedModel, options: PipelineOptions, *,
                       progress: Progress | None = None, should_stop: ShouldStop | None = None
                       ) -> LoweredStages:
    """Run the pipeline, keeping a private copy of every host-runnable stage."""
    from ..pipeline.runner import LoweringPipeline

    t0 = time.perf_counter()
    pipe = LoweringPipeline(model, options)
    keeper = StageKeeper()
    planned = None
    for i, stage in enumerate(pipe.run()):
        keeper.observe(stage, pipe)
        if progress is not None:
            if planned is None:
                from ..pipeline.runner import planned_stage_names
                planned = len(planned_stage_names(pipe.options.flow))
            progress(i + 1, planned, f"lowering: {stage.name}")
        if should_stop is not None and should_stop():
            raise Cancelled("Numerics run cancelled during lowering.")
    return LoweredStages(keeper.stages, list(pipe.snapshots), pipe.options, model, pipe,
                         time.perf_counter() - t0)


def run_numerics(source: str | LoadedModel, options: PipelineOptions | None = None,
                 inputs: InputSpec | str | int | None = None, *,
                 progress: Progress | None = None, on_lowering: Progress | None = None,
                 should_stop: ShouldStop | None = None, sample_size: int = 400,
                 local_samples: int | None = None) -> NumericsResult:
    """Lower `source` and compare float, fake-quant and every runnable stage on the inputs.

    The inputs are loaded before the lowering, so a bad folder fails in a second, not after it.
    """
    options = options or PipelineOptions()
    spec = inputs if isinstance(inputs, InputSpec) else parse_inputs(inputs)
    model = source if isinstance(source, LoadedModel) else load_model(parse_model_source(source))
    samples = load_samples(spec, model.inputs_for(options.flow), options.flow, options.channels_last)
    lowered = lower_for_numerics(model, options, progress=on_lowering, should_stop=should_stop)
    result = analyze(lowered.stages, lowered.final_snapshot, samples, snapshots=lowered.snapshots,
                     model=model.name, target=lowered.options.target, flow=lowered.options.flow,
                     inputs=spec.describe(), progress=progress, should_stop=should_stop,
                     sample_size=sample_size, local_samples=local_samples)
    result.lowering_seconds = lowered.seconds
    return result
