"""The panel's two tool checks, the Jobs that run no model: `selftest` (build the self-test firmware and run it
on the simulator: proves the toolchain and the simulator without ExecuTorch) and `doctor` (which tools,
simulators and checkout are there, and the command that installs what is missing).

Both are steps of a backend_core Job (orchestration/jobs/steps/tools.py), carried out by the window's one
executor (app.runtime.qt_job.QtJob, the job worker process), as `cmlens selftest` and `cmlens doctor` are:
no build or simulator is waited for in the GUI process. Cancel is the job's cancel: the worker stops its
build or simulator (its process group is killed) and the job ends as cancelled."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core.orchestration.jobs.spec import Job, LowerRequest, RunOptions
from backend_core.orchestration.jobs.steps.tools import SELFTEST_MAX_TIMEOUT
from app.runtime.qt_job import QtJob

__all__ = ["SELFTEST_MAX_TIMEOUT", "ToolRuns", "tool_job"]


def tool_job(kind: str, *, target: str = "", sim: str = "qemu", timeout: float = SELFTEST_MAX_TIMEOUT,
             variant: str = "selftest", et_root: str = "", cmsis_nn: str = "") -> Job:
    """The Job of one tool check: kind "selftest" (firmware `variant` for `target` on `sim`) or "doctor"."""
    if kind == "selftest":
        return Job("", LowerRequest(target=target) if target else LowerRequest(), steps=("selftest",),
                   run=RunOptions(sim=sim, timeout=min(timeout, SELFTEST_MAX_TIMEOUT)), selftest=variant)
    return Job("", steps=("doctor",), run=RunOptions(et_root=et_root or None, cmsis_nn=cmsis_nn or None))


class ToolRuns(QObject):
    """Signals:
        line(str, str): (stream, text) of the self-test's build and simulator.
        step(str): a step of the self-test (protocol.SELFTEST_STEPS).
        finished(str, object): (kind, outcome): kind "selftest" | "doctor"; outcome is
            {"result": dict, "exit_code": int} (the self-test's result / the doctor's report),
            {"error": {...}, "exit_code": int}, or {"cancelled": True}.
    """

    line = Signal(str, str)
    step = Signal(str)
    finished = Signal(str, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._kind = ""
        self.job = QtJob("job worker", "tool check", self)
        self.job.event.connect(self._on_event)
        self.job.finished.connect(self._on_finished)

    def is_running(self) -> bool:
        return self.job.is_running()

    def selftest(self, target: str, sim: str, timeout: float, variant: str = "selftest") -> None:
        """Build and run the self-test firmware `variant` (the diagnostic ones: selftest-fail, hang, fault)."""
        self._start("selftest", tool_job("selftest", target=target, sim=sim, timeout=timeout, variant=variant))

    def doctor(self, et_root: str, cmsis_nn: str) -> None:
        self._start("doctor", tool_job("doctor", et_root=et_root, cmsis_nn=cmsis_nn))

    def cancel(self) -> bool:
        return self.job.cancel()

    def shutdown(self) -> None:
        """Stop now (window closing): the worker and its build or simulator are ended."""
        self.job.shutdown()

    def _start(self, kind: str, job: Job) -> None:
        if self.job.is_running():
            raise RuntimeError(f"a {self._kind} is already running")
        self._kind = kind
        self.job.start(job)

    def _on_event(self, kind: str, data: Any) -> None:
        if kind == "line":
            self.line.emit(data["stream"], data["line"])
        elif kind == "run_step":
            self.step.emit(data["name"])

    def _on_finished(self, status: str, row: dict[str, Any] | None) -> None:
        self.finished.emit(self._kind, tool_outcome(self._kind, status, row))


def tool_outcome(kind: str, status: str, row: dict[str, Any] | None) -> dict[str, Any]:
    """The job's end as the panel shows it: the step's result, its error (a missing tool: exit 2), or cancelled."""
    if status == "cancelled" or row is None:
        return {"cancelled": True}
    step = dict((row.get("steps") or {}).get(kind) or {})
    if row.get("error") or not step:
        err = row.get("error") or {"message": f"the {kind} returned nothing", "exit_code": 3}
        return {"error": err, "exit_code": int(err.get("exit_code", 3))}
    code = int(step.pop("exit_code", 0))
    return {"result": step, "exit_code": code}
