"""The numerics of a model the way every face gets them: a Job with the lower and numerics steps."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def numerics_job(source: str, inputs: Any = None, **lower: Any) -> Any:
    """execute_job(lower + numerics); returns the JobResult (its `.numerics`, `.lowering`, `.numerics_inputs`)."""
    from backend_core.orchestration.jobs import Job, LowerRequest, execute_job
    from backend_core.orchestration.jobs.spec import NumericsOptions

    res = execute_job(Job(source, LowerRequest(**lower), steps=("lower", "numerics"),
                      numerics=NumericsOptions(inputs=inputs)))
    res.raise_error()
    return res


def lowered_stages(res: Any) -> Any:
    """What the numerics tests read of a lowering: its kept stages, snapshots, model and options."""
    low = res.lowering
    return SimpleNamespace(stages=low.stage_programs, snapshots=list(low.snapshots),
                           final_snapshot=low.snapshots[-1], final_program=low.stage_programs[-1].program,
                           model=low.loaded_model, options=low.options, seconds=low.seconds,
                           pipeline=low.pipeline)
