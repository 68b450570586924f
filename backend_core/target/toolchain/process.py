"""Run an external command with its stdout and stderr streamed line by line to a callback, a time
limit, and cancellation that ends the whole process group. Argument lists only, never a shell."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from backend_core.common.protocol import TOOL_LINE_LIMIT, LineSplitter

# on_line(stream, line): stream is "stdout" or "stderr"; line has no line terminator.
LineCallback = Callable[[str, str], None]


@dataclass
class ProcessResult:
    """How a command ended, with everything it printed."""

    argv: list[str]
    returncode: int | None
    elapsed_s: float
    timed_out: bool = False
    cancelled: bool = False
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)


class StreamingProcess:
    """One command run with streamed output. `cancel()` may be called from any thread."""

    def __init__(self, argv: Sequence[str | os.PathLike[str]], *, on_line: LineCallback | None = None,
                 cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
                 cancel_event: threading.Event | None = None) -> None:
        self.argv = [str(a) for a in argv]
        self.on_line = on_line
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.cancel_event = cancel_event or threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None

    def cancel(self) -> None:
        """Ask the running command to stop; run() then kills its process group and returns."""
        self.cancel_event.set()

    def run(self, timeout: float | None = None) -> ProcessResult:
        """Start the command and block until it exits, times out or is cancelled.

        Raises FileNotFoundError when the program does not exist."""
        start = time.monotonic()
        result = ProcessResult(argv=self.argv, returncode=None, elapsed_s=0.0)
        if self.cancel_event.is_set():
            result.cancelled = True
            return result
        self._proc = subprocess.Popen(
            self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        events: queue.Queue[tuple[str, bytes | None]] = queue.Queue()
        readers = [
            threading.Thread(target=_pump, args=(self._proc.stdout, "stdout", events), daemon=True),
            threading.Thread(target=_pump, args=(self._proc.stderr, "stderr", events), daemon=True),
        ]
        for t in readers:
            t.start()
        splitters = {"stdout": LineSplitter(TOOL_LINE_LIMIT), "stderr": LineSplitter(TOOL_LINE_LIMIT)}
        open_streams = 2
        deadline = None if timeout is None else start + timeout
        while open_streams:
            if self.cancel_event.is_set():
                result.cancelled = True
                break
            if deadline is not None and time.monotonic() >= deadline:
                result.timed_out = True
                break
            try:
                stream, data = events.get(timeout=0.05)
            except queue.Empty:
                continue
            if data is None:
                open_streams -= 1
                lines = splitters[stream].feed(b"", final=True)
            else:
                lines = splitters[stream].feed(data)
            self._emit(result, stream, lines)
        if result.cancelled or result.timed_out:
            _kill_group(self._proc)
        result.returncode = self._proc.wait()
        for t in readers:
            t.join(timeout=2.0)
        while not events.empty():  # output that arrived while the process was being stopped
            stream, data = events.get_nowait()
            self._emit(result, stream, splitters[stream].feed(data or b"", final=data is None))
        for stream, splitter in splitters.items():
            self._emit(result, stream, splitter.feed(b"", final=True))
        result.elapsed_s = time.monotonic() - start
        return result

    def _emit(self, result: ProcessResult, stream: str, lines: list[str]) -> None:
        target = result.stdout if stream == "stdout" else result.stderr
        for line in lines:
            target.append(line)
            if self.on_line is not None:
                self.on_line(stream, line)


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGKILL it when this process dies, so a killed
    CLI/GUI worker never leaves a simulator spinning in its own session (seen: a QEMU left
    running for 20 minutes). Best effort: not available off Linux."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _pump(pipe, stream: str, events: queue.Queue) -> None:
    """Reader thread: forwards raw chunks as they arrive (partial lines included)."""
    fd = pipe.fileno()
    try:
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            events.put((stream, data))
    except OSError:
        pass
    finally:
        events.put((stream, None))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL it if it has not exited after 2 s."""
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
