"""The window's compare: one Job per side (backend_core.orchestration.compare.sides.side_job, the Job `cmlens compare`
submits for it), all submitted at once to the window's executor (app.runtime.qt_job.QtExecutor: a worker
process each), so a compare takes about the time of its slowest side, as the CLI's does: the lowerings
import ExecuTorch and take seconds to minutes, so the window never runs them and never imports torch; Cancel
kills the workers. The sides' results are then compared here
(backend_core.orchestration.compare: plain dicts, no torch) into the same JSON `cmlens compare --json --with-reports`
writes. A bad side or a failed lowering comes back as its cause and fix."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from backend_core.common.errors import CmlensError

from app.runtime.qt_job import QtExecutor, QtHandle


class CompareSideJobs(QObject):
    """Signals: started(list words), line(str), finished(dict compare JSON), failed(str message)."""

    started = Signal(list)
    line = Signal(str)
    finished = Signal(dict)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.executor = QtExecutor(parent=self)
        self.handles: list[QtHandle | None] = []  # one per side Job (None: a saved report or a baseline)
        self.jobs: list[Any] = []                 # the side Jobs of the running compare (tests read them)
        self._specs: list[Any] = []
        self._labels: list[str] = []
        self._rows: list[dict[str, Any] | None] = []
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
        self._running = True
        self.started.emit(["compare", *words])
        self.handles = [self._submit(i) if job is not None else None for i, job in enumerate(self.jobs)]
        if not any(self.handles):
            self._compare()                        # only saved reports and baselines: nothing to lower

    def cancel(self) -> None:
        if self._running:
            self._stop()
            self.failed.emit("Cancelled: the compare was stopped; the results shown before stay.")

    def shutdown(self) -> None:
        self._stop()

    def has_processes(self) -> bool:
        """True until every side's worker has exited (tests check that Cancel leaves none)."""
        return any(h is not None and h.alive() for h in self.handles)

    # ------------------------------------------------------------------ internals
    def _submit(self, i: int) -> QtHandle:
        job = self.jobs[i]
        self.line.emit(f"{self._labels[i]}: {' + '.join(job.steps)} of {job.model} (side {i + 1} of {len(self.jobs)})")
        h = self.executor.submit(job)
        h.event.connect(lambda kind, data, i=i: self._on_event(i, kind, data))
        h.finished.connect(lambda status, row, i=i: self._on_side_finished(i, status, row))
        return h

    def _stop(self) -> None:
        self._running = False
        for h in self.handles:
            if h is not None:
                h.cancel(graceful=False)          # lowerings only: nothing to wait for

    def _on_event(self, i: int, kind: str, data: dict) -> None:
        if kind == "status" and self._running:
            self.line.emit(f"{self._labels[i]}: {data.get('text', '')}")

    def _on_side_finished(self, i: int, status: str, row: dict | None) -> None:
        if not self._running or status == "cancelled":
            return
        self._rows[i] = row
        if status != "done":
            err = (row or {}).get("error") or {}
            self._stop()                          # one side failed: the compare cannot be made
            self.failed.emit(f"{self._labels[i]}: {err.get('message', status)} (exit {err.get('exit_code', 3)})"
                             f"\n{err.get('hint', '')}".strip())
            return
        if all(r is not None or j is None for r, j in zip(self._rows, self.jobs)):
            self._compare()

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
