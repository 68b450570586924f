"""What the bench scripts run on a target: the Job `cmlens run` submits (its lower step makes the program;
the run step never lowers on its own), returned as the run's ModelRunResult."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable


def run_model(model: str, *, et_root: str | Path, cmsis_nn: str | Path | None, options: Any,
              on_line: Callable[[str, str], None] | None = None) -> Any:
    from backend_core.orchestration.jobs import Job, LowerRequest, execute_job

    job = Job(model, LowerRequest(target=options.target, flow=options.flow), steps=("run",),
              run=replace(options, et_root=str(et_root), cmsis_nn=str(cmsis_nn) if cmsis_nn else None))
    res = execute_job(job, (lambda kind, data: on_line(data["stream"], data["line"]) if kind == "line" else None)
                  if on_line else None)
    res.raise_error()
    return res.run
