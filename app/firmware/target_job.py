"""What "Run on target" runs, as data: the `backend_core.orchestration.jobs.Job` of one press, made of the window's
lowering (so the node ids of the run's per-layer gaps are the graph's) and the form's RunOptions. The
panel runs it with app.runtime.qt_job.QtJob (the job worker process) and shows its events and result."""
from __future__ import annotations

from dataclasses import dataclass

from backend_core.orchestration.jobs.spec import Job, LowerRequest, RunOptions


@dataclass(frozen=True)
class LoweringChoice:
    """The window's current lowering (the model bar's request)."""
    source: str = ""
    target: str = "cortex-m55"
    flow: str = "legacy"
    calib: str | int | None = None
    channels_last: bool = False
    keep_going: bool = False        # the window's lowering was kept going: the run gets that program

    def lower_request(self) -> LowerRequest:
        calib = int(self.calib) if isinstance(self.calib, str) and self.calib.isdigit() else self.calib
        return LowerRequest(target=self.target, flow=self.flow, calib=calib or None,
                            channels_last=self.channels_last, keep_going=self.keep_going)


def target_job(lowering: LoweringChoice, run: RunOptions, profile: bool) -> Job:
    """Lower as the window does, then build and run (and profile): steps ("run",) or ("run", "profile")."""
    return Job(lowering.source, lowering.lower_request(), steps=("run", "profile") if profile else ("run",), run=run)
