"""Runs `python -m backend_core.worker` in a QProcess and turns its JSON lines into signals.

The GUI never imports torch or ExecuTorch: the worker does, streams one JSON object per line
on stdout (see backend_core/worker.py) and logs on stderr. Lines are read as they arrive
(readyRead), never with a blocking wait; Cancel kills the process.
"""
from __future__ import annotations

import json
import os
import sys
import weakref
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal
from . import qt_compat  # noqa: F401,E402  (PySide6 6.12 emit() refcount fix)

REPO_ROOT = Path(__file__).resolve().parent.parent


def worker_arguments(source: str, target: str, flow: str, calib: str | None = None, *,
                     no_cache: bool = False, report: str | None = None, pte: str | None = None,
                     bpte: str | None = None) -> list[str]:
    """The worker's argument list (no shell)."""
    args = ["-m", "backend_core.worker", source, "--target", target, "--flow", flow]
    if calib:
        args += ["--calib", str(calib)]
    if no_cache:
        args.append("--no-cache")
    for flag, value in (("--report", report), ("--pte", pte), ("--bpte", bpte)):
        if value:
            args += [flag, value]
    return args


class WorkerClient(QObject):
    """One worker process at a time.

    Signals:
        message(dict): one parsed stdout line ({"type": "status"|"planned"|"stage"|"done"|"error"}).
        stderrLine(str): one line of the worker's log (stderr).
        finished(int, bool): exit code, and whether it was cancelled (killed) by us.
        failedToStart(str): the process could not be started.
    """

    message = Signal(object)
    stderrLine = Signal(str)
    finished = Signal(int, bool)
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
        self._out = bytearray()
        self._err = bytearray()
        self._dying: list[QProcess] = []

    # ------------------------------------------------------------------ control
    def is_running(self) -> bool:
        try:
            return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning
        except RuntimeError:                 # the C++ object is already gone
            return False

    def process_id(self) -> int:
        return int(self._proc.processId()) if self._proc is not None else 0

    def start(self, args: list[str]) -> None:
        """Start the worker with `args` (from worker_arguments); kills a running one first."""
        self.cancel()
        self._out.clear()
        self._err.clear()
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

    def cancel(self) -> None:
        """Kill the worker now (an immediate, clean cancel: it holds no state we need).

        Does not wait: the killed process is reaped when Qt reports it finished, then
        `finished(-1, True)` is emitted.
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
        proc.kill()

    def _reap(self, proc: QProcess) -> None:
        if proc in self._dying:
            self._dying.remove(proc)
        proc.deleteLater()
        self.finished.emit(-1, True)

    def has_processes(self) -> bool:
        """True while a worker runs or a killed one is not reaped yet."""
        return self.is_running() or bool(self._dying)

    # ------------------------------------------------------------------ streams
    def _on_stdout(self) -> None:
        if self._proc is None:
            return
        self._out += bytes(self._proc.readAllStandardOutput().data())
        while True:
            i = self._out.find(b"\n")
            if i < 0:
                break
            line = bytes(self._out[:i])
            del self._out[: i + 1]
            self._emit_line(line)

    def _emit_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            msg = json.loads(text)
        except json.JSONDecodeError:
            self.stderrLine.emit(text)            # stray print() from user code
            return
        if isinstance(msg, dict):
            self.message.emit(msg)

    def _on_stderr(self) -> None:
        if self._proc is None:
            return
        self._err += bytes(self._proc.readAllStandardError().data())
        *lines, rest = self._err.split(b"\n")
        self._err = bytearray(rest)
        for ln in lines:
            self.stderrLine.emit(ln.decode("utf-8", "replace").rstrip())

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        proc = self._proc
        if proc is None:
            return
        self._out += bytes(proc.readAllStandardOutput().data())
        if self._out:
            for ln in bytes(self._out).split(b"\n"):
                self._emit_line(ln)
            self._out.clear()
        if self._err:
            self.stderrLine.emit(bytes(self._err).decode("utf-8", "replace"))
            self._err.clear()
        crashed = status == QProcess.ExitStatus.CrashExit
        self._proc = None
        proc.deleteLater()
        self.finished.emit(code if not crashed else -1, False)

    def _on_error(self, err: QProcess.ProcessError) -> None:
        if err == QProcess.ProcessError.FailedToStart and self._proc is not None:
            msg = self._proc.errorString()
            self._proc.deleteLater()
            self._proc = None
            self.failedToStart.emit(f"Could not start the lowering worker ({sys.executable}): {msg}")

