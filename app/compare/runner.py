"""The window's compare: one Job per side (backend_core.orchestration.compare.sides.side_job, the Job `cmlens compare`
submits for it), run one after the other in the job worker through the window's adapter
(app.runtime.qt_job.QtJob): the lowerings import ExecuTorch and take seconds to minutes, so the window never
runs them and never imports torch; Cancel kills the worker. The sides' results are then compared here
(backend_core.orchestration.compare: plain dicts, no torch) into the same JSON `cmlens compare --json --with-reports`
writes. A bad side or a failed lowering comes back as its cause and fix."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core.common.errors import CmlensError

from app.runtime.qt_job import QtJob


class CompareRunner(QObject):
    """Signals: started(list words), line(str), finished(dict compare JSON), failed(str message)."""

    started = Signal(list)
    line = Signal(str)
    finished = Signal(dict)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = QtJob("compare worker", "compare", self, cancel_grace_ms=0)
        self.job.event.connect(self._on_event)
        self.job.finished.connect(self._on_job_finished)
        self.jobs: list[Any] = []                 # the side Jobs of the running compare (tests read them)
        self._specs: list[Any] = []
        self._labels: list[str] = []
        self._rows: list[dict[str, Any] | None] = []
        self._next = 0
        self._running = False

    def is_running(self) -> bool:
        return self._running

    def start(self, words: list[str]) -> None:
        """`words`: what follows `cmlens compare` (sides and --vary), e.g. ["m.py", "--vary", "target=m4,m55"]."""
        if self._running:
            raise RuntimeError("a compare is already running")
        from backend_core.orchestration.compare.sides import auto_labels, side_job, specs_from_words

        try:
            self._specs = specs_from_words(words)
        except CmlensError as exc:
            self.failed.emit(f"{exc.message} (exit {exc.exit_code})\n{exc.hint}".strip())
            return
        self._labels = auto_labels(self._specs)
        self.jobs = [side_job(s) for s in self._specs]
        self._rows = [None] * len(self.jobs)
        self._next = 0
        self._running = True
        self.started.emit(["compare", *words])
        self._submit_next()

    def cancel(self) -> None:
        if self._running:
            self._running = False
            self.job.cancel(graceful=False)
            self.failed.emit("Cancelled: the compare was stopped; the results shown before stay.")

    def shutdown(self) -> None:
        self._running = False
        self.job.shutdown(graceful=False)

    # ------------------------------------------------------------------ internals
    def _submit_next(self) -> None:
        while self._next < len(self.jobs) and self.jobs[self._next] is None:
            self._next += 1                        # a saved report or a baseline: read when compared
        if self._next >= len(self.jobs):
            self._compare()
            return
        i = self._next
        self.line.emit(f"{self._labels[i]}: {' + '.join(self.jobs[i].steps)} of {self.jobs[i].model} "
                       f"(side {i + 1} of {len(self.jobs)})")
        self.job.start(self.jobs[i])

    def _on_event(self, kind: str, data: dict) -> None:
        if kind == "status":
            self.line.emit(f"{self._labels[self._next]}: {data.get('text', '')}")

    def _on_job_finished(self, status: str, row: dict | None) -> None:
        if not self._running or status == "cancelled":
            return
        self._rows[self._next] = row
        if status != "done":
            err = (row or {}).get("error") or {}
            self._running = False
            self.failed.emit(f"{self._labels[self._next]}: {err.get('message', status)} (exit {err.get('exit_code', 3)})"
                             f"\n{err.get('hint', '')}".strip())
            return
        self._next += 1
        self._submit_next()

    def _compare(self) -> None:
        from backend_core.orchestration.compare import DEFAULT_RTOL, compare_facts, compare_to_dict
        from backend_core.orchestration.compare.sides import side_from_result

        self._running = False
        try:
            sides = [side_from_result(s, lab, row) for s, lab, row in zip(self._specs, self._labels, self._rows)]
            cmp = compare_facts([s.facts for s in sides], DEFAULT_RTOL, reports=[s.report for s in sides])
        except CmlensError as exc:
            self.failed.emit(f"{exc.message} (exit {exc.exit_code})\n{exc.hint}".strip())
            return
        self.finished.emit(compare_to_dict(cmp, reports=True))
