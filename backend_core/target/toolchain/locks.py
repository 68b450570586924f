"""A cancellable, exclusive file lock shared by the firmware and ExecuTorch library builds:
two processes must not build one tree (or configure one checkout) at the same time."""
from __future__ import annotations

import contextlib
import fcntl
import threading
from pathlib import Path
from typing import Callable, Iterator

from backend_core.common.errors import Cancelled


@contextlib.contextmanager
def exclusive_lock(path: Path, cancel_event: threading.Event, on_wait: Callable[[], None],
                   cancelled_message: str) -> Iterator[None]:
    """Hold an flock on `path`; while another process holds it, call `on_wait` once and poll
    `cancel_event` every 0.2 s (raising Cancelled(cancelled_message) when it is set)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        waited = False
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waited:
                    on_wait()
                    waited = True
                if cancel_event.wait(0.2):
                    raise Cancelled(cancelled_message) from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
