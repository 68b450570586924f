"""A killed CLI or GUI worker must not leave a simulator or build running in its own session."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import sys
from backend_core.target.toolchain.process import StreamingProcess
StreamingProcess(["sleep", "300"], on_line=lambda s, l: None).run(timeout=600)
"""



def test_streamed_child_dies_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT)
    deadline = time.monotonic() + 60
    child_pid = None
    while time.monotonic() < deadline and child_pid is None:
        out = subprocess.run(["pgrep", "-P", str(parent.pid), "sleep"], capture_output=True, text=True).stdout
        child_pid = int(out.split()[0]) if out.split() else None
        time.sleep(0.1)
    assert child_pid is not None, "the streamed command did not start"
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(child_pid, signal.SIGKILL)
    raise AssertionError("the child outlived its killed parent")
