"""The "Fit this board" action: the schedule search of the lowering on screen as a Job (issue 47), the model every
view of it observes (the Memory tab's before/after timeline and numbers, the graph's per-patch marks, the
status bar's progress). It owns the state; the views own none.

The Job is the lowering's own (same model and options, so its node ids are the graph's) with the steps
`cmlens memory MODEL --board B --schedule fit:B [--input-dtype int8]` runs: lower + memory + schedule,
submitted through the window's adapter over the worker-process executor (app.runtime.qt_job.QtJob). The
search reports each candidate as a status line ("candidate 3/20: …"), read here as progress. A failed or
cancelled search leaves the last result on screen; bad input (a board the model cannot fit) is the step's
own message and fix, never a traceback."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from backend_core.orchestration.jobs.spec import Job, ScheduleOptions

from app.runtime.qt_job import QtJob

_CANDIDATE = re.compile(r"candidate (\d+)/(\d+)")


def fit_job(lowering: Job, board: str, int8: bool, grids: tuple[int, ...] = (), splits: tuple[str, ...] = ()) -> Job:
    """The Job of `cmlens memory MODEL --board BOARD --schedule fit:BOARD`, lowered as the graph was.
    `grids`/`splits` narrow the search (ScheduleOptions: tests and benches); () is the full search."""
    return replace(lowering, steps=("lower", "memory", "schedule"), board=board,
                   schedule=ScheduleOptions(spec=f"fit:{board}", input_dtype="int8" if int8 else "float32",
                                            grids=grids, splits=splits))


def progress_of(text: str) -> tuple[int, int]:
    """(done, total) of a search status line; (0, 0) when it is not a candidate's (busy)."""
    m = _CANDIDATE.search(text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


class FitModel(QObject):
    """The last schedule found for the lowering on screen, and the search running for it.

    Signals:
        started(str): a search began for this board.
        progress(str, int, int): text, done, total (total 0: busy) while it runs.
        resultChanged(object): the schedule section (res.steps["schedule"] with "before": the unscheduled
            memory report) or None (cleared: another lowering).
        failed(str): the search ended without a result: the message (and fix) in words; the result shown
            before is kept.
        finished(str): done | failed | cancelled | error.
    """

    started = Signal(str)
    progress = Signal(str, int, int)
    resultChanged = Signal(object)
    failed = Signal(str)
    finished = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = QtJob("schedule worker", "schedule", self, cancel_grace_ms=0)
        self.job.event.connect(self._on_event)
        self.job.finished.connect(self._on_finished)
        self.result: dict[str, Any] | None = None     # the schedule shown (kept when a later search fails)
        self.result_job: Job | None = None            # the Job that found it
        self.message = ""                            # the last failure, in words
        self.grids: tuple[int, ...] = ()             # () the full search; tests narrow it
        self.splits: tuple[str, ...] = ()
        self._source: Callable[[], Job | None] = lambda: None

    # ------------------------------------------------------------------ control
    def set_request_source(self, fn: Callable[[], Job | None]) -> None:
        """`fn() -> Job | None`: the lowering the graph shows (app.lowering.session.lowering_job)."""
        self._source = fn

    def fit(self, board: str, int8: bool) -> bool:
        """Search a schedule of the lowering on screen that fits `board`; False (and `failed`) when there
        is nothing to search yet."""
        low = self._source()
        if low is None or not low.model:
            self._fail("Fit this board: lower a model first (the search rewrites its lowering).")
            return False
        if not board:
            self._fail("Fit this board: pick a board first (a named board: custom sizes have no board to fit).")
            return False
        self.job.start(fit_job(low, board, int8, self.grids, self.splits))
        self.started.emit(board)
        self.progress.emit(f"fitting {board}: lowering {low.model} again (the search rewrites the live program)", 0, 0)
        return True

    def cancel(self) -> bool:
        """Stop the search now (kills its worker); the result shown before stays."""
        return self.job.cancel(graceful=False)

    def clear(self) -> None:
        """Another lowering is on screen: its node ids and plan are not this result's."""
        if self.job.is_running():
            self.cancel()
        self.result, self.result_job, self.message = None, None, ""
        self.resultChanged.emit(None)

    def is_running(self) -> bool:
        return self.job.is_running()

    @property
    def status(self) -> str:
        return self.job.status

    @property
    def seconds(self) -> float:
        return self.job.seconds

    def shutdown(self) -> None:
        self.job.shutdown(graceful=False)

    # ------------------------------------------------------------------ worker stream
    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "status" and data.get("text"):
            text = str(data["text"])
            done, total = progress_of(text)
            self.progress.emit(text, done, total)

    def _fail(self, message: str) -> None:
        self.message = message
        self.failed.emit(message)

    def _on_finished(self, status: str, row: dict[str, Any] | None) -> None:
        if status == "cancelled" or row is None:
            self._fail("search cancelled: the schedule shown is the one found before" if self.result
                       else "search cancelled")
        else:
            steps = row.get("steps") or {}
            sched = steps.get("schedule")
            if status == "done" and sched is not None:
                self.result = {**sched, "before": steps.get("memory")}
                self.result_job, self.message = self.job.job, ""
                self.resultChanged.emit(self.result)
            else:
                err = row.get("error") or {}
                text = str(err.get("message") or status)
                hint = str(err.get("hint") or "")
                self._fail(text + (f" {hint}" if hint else ""))
        self.finished.emit(status)
