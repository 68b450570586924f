"""No face reaches into a handle's process: the window cancels through `JobHandle.cancel(force=...)` and asks
`alive()`, `pid()`, `command()`; only the worker-process executor holds the Popen (issue 45)."""
from __future__ import annotations

import ast
from pathlib import Path

from backend_core.orchestration.execute.api import JobHandle
from backend_core.orchestration.jobs import Job

ROOT = Path(__file__).resolve().parents[2]


def test_a_handle_exposes_no_process_and_no_raw_dict() -> None:
    h = JobHandle(Job("ds_cnn"))
    assert not hasattr(h, "process") and not hasattr(h, "raw")
    assert (h.alive(), h.pid(), h.command()) == (True, 0, [])


def test_no_face_signals_or_reads_a_worker_process() -> None:
    offenders = []
    for py in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("process", "_proc", "raw") \
                    and isinstance(node.value, ast.Attribute) and "handle" in node.value.attr:
                offenders.append(f"{py.relative_to(ROOT)}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.ImportFrom) and any(a.name == "signal_group" for a in node.names):
                offenders.append(f"{py.relative_to(ROOT)}:{node.lineno} imports signal_group")
    assert not offenders, "a face reaching into a job's process:\n" + "\n".join(offenders)
