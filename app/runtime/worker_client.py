"""Runs a `python -m backend_core.workers.*` process in a QProcess and turns its protocol lines
(backend_core.protocol) into signals.

The GUI never imports torch or ExecuTorch: the worker does, streams one JSON object per line
on stdout and logs on stderr. Lines are read as they arrive
(readyRead), never with a blocking wait; Cancel kills the process.
"""
from __future__ import annotations

import os
import sys
import time
import weakref
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from backend_core.protocol import LineSplitter, parse_line

REPO_ROOT = Path(__file__).resolve().parents[2]


class WorkerClient(QObject):
    """One worker process at a time.

    Signals:
        message(dict): one protocol message from stdout (see backend_core.protocol).
        stderrLine(str): one line of the worker's log (stderr).
        exited(int, bool): exit code, and whether it was cancelled (killed) by us.
        failedToStart(str): the process could not be started.
    """

    message = Signal(object)
    stderrLine = Signal(str)
    exited = Signal(int, bool)
    failedToStart = Signal(str)

    _instances: "weakref.WeakSet[WorkerClient]" = weakref.WeakSet()

    @classmethod
    def instances(cls) -> list["WorkerClient"]:
        """Every live client (tests check that none left a process behind)."""
        return list(cls._instances)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        WorkerClient._instances.add(self)
        self._proc: QProcess | None = None
        self._out = LineSplitter()
        self._err = LineSplitter()
        self._dying: list[QProcess] = []

    # ------------------------------------------------------------------ control
    def is_running(self) -> bool:
        try:
            return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning
        except RuntimeError:                 # the C++ object is already gone
            return False

    def process_id(self) -> int:
        return int(self._proc.processId()) if self._proc is not None else 0

    def start(self, args: list[str], stdin: bytes | None = None) -> None:
        """Start the worker with `args` (from worker_arguments); kills a running one first. `stdin`:
        bytes written to the worker's standard input, which is then closed (the job worker reads one
        line of Job JSON there); without it the worker's stdin stays open and empty."""
        self.cancel()
        self._out = LineSplitter()
        self._err = LineSplitter()
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONUNBUFFERED", "1")
        pp = env.value("PYTHONPATH", "")
        env.insert("PYTHONPATH", str(REPO_ROOT) + (os.pathsep + pp if pp else ""))
        proc.setProcessEnvironment(env)
        proc.setWorkingDirectory(str(REPO_ROOT))
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        proc.readyReadStandardOutput.connect(self._on_stdout)
        proc.readyReadStandardError.connect(self._on_stderr)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        self._proc = proc
        proc.start(sys.executable, args)
        if stdin is not None:
            proc.write(stdin)
            proc.closeWriteChannel()            # written once the process has started

    def cancel(self, grace_ms: int = 0) -> None:
        """Kill the worker now (an immediate, clean cancel: it holds no state we need).

        `grace_ms` > 0: SIGTERM first and SIGKILL only if it still runs after that long. For a worker
        that ends its own children on SIGTERM (the job worker stops its build or simulator and kills
        their process groups): a SIGKILL would orphan a compiler under cmake. Its messages after
        the cancel are not forwarded either way.

        Does not wait: the killed process is reaped when Qt reports it finished, then
        `exited(-1, True)` is emitted.
        """
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        for sig in (proc.readyReadStandardOutput, proc.readyReadStandardError, proc.finished):
            try:
                sig.disconnect()
            except (RuntimeError, TypeError):
                pass
        if proc.state() == QProcess.ProcessState.NotRunning:
            proc.deleteLater()
            return
        self._dying.append(proc)
        proc.finished.connect(lambda *_a, p=proc: self._reap(p))
        if grace_ms > 0:
            proc.terminate()
            QTimer.singleShot(grace_ms, proc, lambda p=proc: self._kill_if_alive(p))
        else:
            proc.kill()

    @staticmethod
    def _kill_if_alive(proc: QProcess) -> None:
        try:
            if proc.state() != QProcess.ProcessState.NotRunning:
                proc.kill()
        except RuntimeError:                 # already reaped and deleted
            pass

    def _reap(self, proc: QProcess) -> None:
        if proc in self._dying:
            self._dying.remove(proc)
        proc.deleteLater()
        self.exited.emit(-1, True)

    def wait_for_exit(self, ms: int) -> bool:
        """Block up to `ms` until the worker (and a cancelled one still ending) has exited; for a window
        that closes after a graceful cancel, so the worker can end its children before Qt kills it."""
        deadline = time.monotonic() + ms / 1000
        for proc in [p for p in (self._proc, *self._dying) if p is not None]:
            left = int((deadline - time.monotonic()) * 1000)
            try:
                if left <= 0 or (proc.state() != QProcess.ProcessState.NotRunning and not proc.waitForFinished(left)):
                    return False
            except RuntimeError:             # already deleted
                continue
        return True

    def has_processes(self) -> bool:
        """True while a worker runs or a killed one is not reaped yet."""
        return self.is_running() or bool(self._dying)

    # ------------------------------------------------------------------ streams
    def _on_stdout(self) -> None:
        if self._proc is not None:
            self._emit_lines(self._out.feed(bytes(self._proc.readAllStandardOutput().data())))

    def _emit_lines(self, lines: list[str]) -> None:
        for text in lines:
            if not text.strip():
                continue
            msg = parse_line(text)
            if msg is None:
                self.stderrLine.emit(text.rstrip())     # a stray print() from user code
            else:
                self.message.emit(msg)

    def _on_stderr(self) -> None:
        if self._proc is not None:
            for ln in self._err.feed(bytes(self._proc.readAllStandardError().data())):
                self.stderrLine.emit(ln.rstrip())

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        proc = self._proc
        if proc is None:
            return
        self._emit_lines(self._out.feed(bytes(proc.readAllStandardOutput().data()), final=True))
        for ln in self._err.feed(bytes(proc.readAllStandardError().data()), final=True):
            self.stderrLine.emit(ln.rstrip())
        crashed = status == QProcess.ExitStatus.CrashExit
        self._proc = None
        proc.deleteLater()
        self.exited.emit(code if not crashed else -1, False)

    def _on_error(self, err: QProcess.ProcessError) -> None:
        if err == QProcess.ProcessError.FailedToStart and self._proc is not None:
            msg = self._proc.errorString()
            self._proc.deleteLater()
            self._proc = None
            self.failedToStart.emit(f"{sys.executable}: {msg}")

