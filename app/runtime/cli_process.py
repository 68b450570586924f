"""One `cmlens` subcommand (`python -m app.cli ...`) in a QProcess, for the "Run on target" panel.

Why a process and not a thread: a target run lowers with ExecuTorch (imports alone take ~8 s), builds
with cmake and runs a simulator; in a child process the window never freezes, never imports torch, and
Cancel is a kill of the process group's leader (the target flow's simulators and builds die with their
parent, PR_SET_PDEATHSIG). Output is read as it arrives (both channels, line by line) and the result
comes back through `--json-file`, so nothing depends on parsing interleaved stdout.

Signals:
- `line(stream, text)`: one complete line; stream is "stdout" or "stderr".
- `exited(exit_code, result)`: exit status (-1 when killed or crashed) and the parsed JSON file (or None).
"""
from __future__ import annotations

import json
import sys
import tempfile
import weakref
from pathlib import Path
from typing import Any, ClassVar

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal

from backend_core.protocol import LineSplitter


class CliProcess(QObject):
    line = Signal(str, str)
    exited = Signal(int, object)

    _instances: ClassVar["weakref.WeakSet[CliProcess]"] = weakref.WeakSet()

    def __init__(self, parent: QObject | None = None, python: str | None = None) -> None:
        super().__init__(parent)
        self.python = python or sys.executable
        self._proc: QProcess | None = None
        self._split = {"stdout": LineSplitter(), "stderr": LineSplitter()}
        self._json: Path | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self.killed = False
        self.args: list[str] = []
        CliProcess._instances.add(self)

    @classmethod
    def running_instances(cls) -> list["CliProcess"]:
        """For tests: processes still alive (there must be none after a test)."""
        return [p for p in list(cls._instances) if p.is_running()]

    def is_running(self) -> bool:
        try:
            return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning
        except RuntimeError:                 # the C++ QProcess went with its deleted window
            return False

    def start(self, cli_args: list[str], *, json_file: bool = True) -> None:
        """Start `python -m app.cli <cli_args> [--json-file F]`; only one run at a time per object."""
        if self.is_running():
            raise RuntimeError("a cmlens process is already running")
        self._tmp = tempfile.TemporaryDirectory(prefix="cmlens-panel-")
        self._json = Path(self._tmp.name) / "result.json" if json_file else None
        self.args = ["-m", "app.cli", *cli_args] + (["--json-file", str(self._json)] if self._json else [])
        self._split = {"stdout": LineSplitter(), "stderr": LineSplitter()}
        self.killed = False
        proc = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONUNBUFFERED", "1")
        env.insert("PYTHONWARNINGS", "ignore")
        proc.setProcessEnvironment(env)
        proc.setWorkingDirectory(str(Path(__file__).resolve().parents[2]))   # `-m app.cli` from the repo
        proc.readyReadStandardOutput.connect(lambda: self._read("stdout"))
        proc.readyReadStandardError.connect(lambda: self._read("stderr"))
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        self._proc = proc
        proc.start(self.python, self.args)

    def kill(self) -> None:
        """Cancel: kill the process now (no waiting on the UI thread; `finished` follows)."""
        if self.is_running():
            self.killed = True
            assert self._proc is not None
            self._proc.kill()

    # -- internals ---------------------------------------------------------------------------------
    def _read(self, stream: str, final: bool = False) -> None:
        """Emit the complete lines read so far (the one LineSplitter of backend_core.protocol: any
        line ending, UTF-8 split across chunks, a megabyte-long partial line flushed as is)."""
        proc = self._proc
        if proc is None:
            return
        data = proc.readAllStandardOutput() if stream == "stdout" else proc.readAllStandardError()
        for ln in self._split[stream].feed(bytes(data.data()), final=final):
            self.line.emit(stream, ln)

    def _flush(self) -> None:
        for stream in ("stdout", "stderr"):
            self._read(stream, final=True)

    def _result(self) -> dict[str, Any] | None:
        if self._json is None or not self._json.is_file():
            return None
        try:
            return json.loads(self._json.read_text())
        except (OSError, ValueError) as exc:
            return {"error": {"message": f"unreadable result file: {exc}", "type": "GuiError"}}

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self._flush()
        result = self._result()
        crashed = status == QProcess.ExitStatus.CrashExit or self.killed
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self.exited.emit(-1 if crashed else int(code), result)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.line.emit("stderr", f"could not start {self.python}: {self._proc.errorString() if self._proc else ''}")
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None
            self.exited.emit(-1, None)


def cli_env_note() -> str:
    """Where the child's Python comes from (shown in the console's first line)."""
    return f"{sys.executable} -m app.cli (cwd {Path(__file__).resolve().parents[2]})"

