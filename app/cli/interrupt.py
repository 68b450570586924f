"""Ctrl-C and SIGTERM for every subcommand, handled the same way.

The first SIGINT or SIGTERM raises KeyboardInterrupt in the main thread, which is waiting on a job's
handle: the job is cancelled (it stops at its next stage, calibration sample or subprocess poll) and its
cancelled result is reported, exit 130 for SIGINT and 143 for SIGTERM (the shell's 128 + signal). A
second signal ends the process at once: the user asked twice."""
from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Callable

_received: list[int] = []


def install() -> Callable[[], None]:
    """Take over SIGINT and SIGTERM for this process (the CLI's `main`, never the window's); returns what
    puts the previous handlers back (tests call `main` in their own process). Off the main thread,
    Python allows no handler: nothing is changed."""
    _received.clear()
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    return restore


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _received:
        os.write(2, b"\ncmlens: interrupted again: stopping now without cleaning up\n")
        os._exit(128 + _received[0])
    _received.append(signum)
    raise KeyboardInterrupt


def signal_name() -> str:
    """The signal that stopped the work, as the user would write it."""
    return "SIGTERM" if _received and _received[0] == signal.SIGTERM else "Ctrl-C"


def exit_code() -> int:
    """130 after SIGINT (or a cancel with no signal), 143 after SIGTERM."""
    return 128 + (_received[0] if _received else signal.SIGINT)
