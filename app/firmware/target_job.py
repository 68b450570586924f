"""What "Run on target" runs, as data: the `backend_core.orchestration.jobs.Job` of one press, made of the
window's lowering Job (so the node ids of the run's per-layer gaps are the graph's) and the form's RunOptions.
The panel runs it with app.runtime.qt_job.QtJob (the job worker process) and shows its events and result."""
from __future__ import annotations

from dataclasses import replace

from backend_core.orchestration.jobs.spec import Job, RunOptions


def target_job(lowering: Job, run: RunOptions, profile: bool) -> Job:
    """Lower as the window does, then build and run (and profile): steps ("run",) or ("run", "profile")."""
    return replace(lowering, steps=("run", "profile") if profile else ("run",), run=run)
