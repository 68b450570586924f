"""A single background QThread that runs plain Python callables in order (layout, exports).

Results come back as signals on the UI thread. Jobs on a `channel` supersede older queued
jobs on the same channel (a stage switch makes the previous layout request stale).
`shutdown()` stops the thread (and whatever external process a job registered); call it
when the owner closes, so no QThread outlives its window.
"""
from __future__ import annotations

import itertools
import subprocess
import traceback
import weakref
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot


class _Executor(QObject):
    done = Signal(int, object)
    failed = Signal(int, str)
    skipped = Signal(int)

    def __init__(self, background: "BackgroundRunner") -> None:
        super().__init__()
        self._runner = background

    @Slot(int, str, object)
    def run(self, job_id: int, channel: str, fn: Callable[[], Any]) -> None:
        if self._runner.is_stale(job_id, channel):
            self.skipped.emit(job_id)
            return
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001 - report to the UI, never lose a job silently
            self.failed.emit(job_id, f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            return
        self.done.emit(job_id, result)


class BackgroundRunner(QObject):
    """Signals: done(job_id, result), failed(job_id, message), skipped(job_id) (superseded)."""

    done = Signal(int, object)
    failed = Signal(int, str)
    skipped = Signal(int)
    _submit = Signal(int, str, object)

    _instances: "weakref.WeakSet[BackgroundRunner]" = weakref.WeakSet()

    @classmethod
    def instances(cls) -> list["BackgroundRunner"]:
        """Every live runner (tests check that none is left running)."""
        return list(cls._instances)

    def __init__(self, name: str = "cmlens-background", parent: QObject | None = None) -> None:
        super().__init__(parent)
        BackgroundRunner._instances.add(self)
        self._ids = itertools.count(1)
        self._latest: dict[str, int] = {}
        self._proc: subprocess.Popen | None = None
        self._thread = QThread()
        self._thread.setObjectName(name)
        self._exec = _Executor(self)
        self._exec.moveToThread(self._thread)
        self._submit.connect(self._exec.run)
        self._exec.done.connect(self._on_done)
        self._exec.failed.connect(self.failed)
        self._exec.skipped.connect(self.skipped)
        self._thread.start()

    def submit(self, fn: Callable[[], Any], channel: str = "") -> int:
        """Queue `fn`; returns its job id. A later job on the same channel makes it stale."""
        job_id = next(self._ids)
        if channel:
            self._latest[channel] = job_id
        self._submit.emit(job_id, channel, fn)
        return job_id

    def is_stale(self, job_id: int, channel: str) -> bool:
        return bool(channel) and self._latest.get(channel, job_id) != job_id

    def register_process(self, proc: subprocess.Popen | None) -> None:
        """Jobs call this with the external process they run, so shutdown can kill it."""
        self._proc = proc

    def _on_done(self, job_id: int, result: object) -> None:
        self.done.emit(job_id, result)

    def is_running(self) -> bool:
        try:
            return self._thread.isRunning()
        except RuntimeError:                 # the C++ object is already gone
            return False

    def shutdown(self) -> None:
        """Stop the thread: kill a running external process, drop queued jobs, join."""
        if not self.is_running():
            return
        self._latest = {k: -1 for k in self._latest}   # every queued job becomes stale
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
        self._thread.quit()
        self._thread.wait()
