"""`cmlens compare SIDES --json F --with-reports` in a child process (app/runtime/cli_process.py): the
lowerings import ExecuTorch and take seconds to minutes, so the window never runs them, never imports
torch, and Cancel kills the child. The JSON file comes back parsed; a failure comes back as the
child's own message (cmlens names the cause and the fix on stderr, exit 2)."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.runtime.cli_process import CliProcess


class CompareRunner(QObject):
    """Signals: started(list args), line(str), finished(dict compare JSON), failed(str message)."""

    started = Signal(list)
    line = Signal(str)
    finished = Signal(dict)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.proc = CliProcess(self)
        self.proc.line.connect(self._on_line)
        self.proc.exited.connect(self._on_exited)
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._out: Path | None = None
        self._stderr: list[str] = []

    def is_running(self) -> bool:
        return self.proc.is_running()

    def start(self, side_args: list[str]) -> None:
        """`side_args`: what follows `cmlens compare` (sides and options), e.g. ["m.py", "--vary", "target=m4,m55"]."""
        if self.is_running():
            raise RuntimeError("a compare is already running")
        self._tmp = tempfile.TemporaryDirectory(prefix="cmlens-compare-")
        self._out = Path(self._tmp.name) / "compare.json"
        self._stderr = []
        args = ["compare", *side_args, "--json", str(self._out), "--with-reports"]
        self.proc.start(args, json_file=False)
        self.started.emit(args)

    def cancel(self) -> None:
        self.proc.kill()

    def _on_line(self, stream: str, text: str) -> None:
        if stream == "stderr":
            self._stderr.append(text)
        self.line.emit(text)

    def _on_exited(self, code: int, _result: Any) -> None:
        data: dict[str, Any] | None = None
        if code == 0 and self._out is not None and self._out.is_file():
            try:
                data = json.loads(self._out.read_text())
            except (OSError, ValueError) as exc:
                self._fail(f"the compare's JSON could not be read ({exc}); run the same `cmlens compare` "
                           "in a terminal to see its output")
                return
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        if self.proc.killed:
            self.failed.emit("Cancelled: the compare was stopped; the results shown before stay.")
        elif data is None:
            tail = "\n".join(t for t in self._stderr[-12:] if t.strip()) or "(no output)"
            self.failed.emit(f"cmlens compare failed (exit {code}):\n{tail}")
        else:
            self.finished.emit(data)

    def _fail(self, message: str) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self.failed.emit(message)
