"""The one message format between CortexM Lens worker processes and the GUI.

The job worker (`python -m backend_core.orchestration.workers.job`: a Job as JSON on stdin, the only worker process)
and `cmlens run --protocol` write one JSON object per line on stdout; human-readable logs go to stderr.
Both ends import the names from here, so a message type is never a bare string literal in two places.
This module is the message format and nothing else (no argument builders: a worker reads a Job):

  {"type": "stage",    "snapshot": {...GraphSnapshot.to_dict()...}, "planned": [...]}   a lowering stage
  {"type": "event",    "kind": "status"|"step"|"run_step"|"line"|"progress", "data": {...}}   execute_job's events
  {"type": "result",   "job_result": {...JobResult.to_dict()...}}              the job's result
  {"type": "done",     "status": "done"|"failed"|"cancelled", "exit_code": 0|1|2|3|130}
  {"type": "error",    "exit_code": 2|3, "message": "...", "hint": "...", "detail": "..."}   the Job was refused
  {"type": "step" | "progress", ...}                                          `cmlens run --protocol` (the
                                                                               steps and a build's percentage)
"""
from __future__ import annotations

import codecs
import json
import re
import sys
import traceback
from typing import IO, Any

STATUS = "status"
PLANNED = "planned"
STAGE = "stage"
PROGRESS = "progress"
STEP = "step"
RESULT = "result"
ERROR = "error"
DONE = "done"
EVENT = "event"             # one execute_job event of a job worker: {"kind": ..., "data": {...}}
MESSAGE_TYPES = (STATUS, PLANNED, STAGE, PROGRESS, STEP, RESULT, ERROR, DONE, EVENT)

# The steps of a target run, in order (`cmlens run --protocol` emits them; the panel's progress bar).
RUN_STEPS = ("lower", "check ops", "libraries", "build runner", "run", "gaps", "results")
SELFTEST_STEPS = ("build runner", "run", "results")

JOB_WORKER = "backend_core.orchestration.workers.job"      # Job JSON on stdin -> events + {"type": "result", "job_result": ...}


def encode_event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """A execute_job event as a protocol message (a stage's snapshot as its JSON form)."""
    if kind == "stage":
        return {"type": STAGE, "snapshot": data["snapshot"].to_dict(), "planned": data.get("planned")}
    return {"type": EVENT, "kind": kind, "data": data}


def decode_event(msg: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The execute_job event a protocol message carries (a stage gets its GraphSnapshot back), else None."""
    if msg.get("type") == STAGE:
        from backend_core.common.snapshot.model import snapshot_from_dict

        return "stage", {"snapshot": snapshot_from_dict(msg["snapshot"]), "planned": msg.get("planned") or []}
    if msg.get("type") == EVENT:
        return msg.get("kind", ""), msg.get("data") or {}
    return None


def emit(obj: dict[str, Any], stream: IO[str] | None = None) -> None:
    """Write one protocol line (NaN is not JSON: refused, so the reader never chokes)."""
    if obj.get("type") not in MESSAGE_TYPES:
        raise ValueError(f"not a protocol message type: {obj.get('type')!r}")
    out = stream or sys.stdout
    out.write(json.dumps(obj, default=str, allow_nan=False) + "\n")
    out.flush()


def error_message(exc: BaseException, worker: str) -> dict[str, Any]:
    """An `error` message for any exception: typed errors keep their exit code and hint."""
    from backend_core.common.errors import CmlensError

    if isinstance(exc, CmlensError):
        return {"type": ERROR, "exit_code": exc.exit_code, "message": exc.message, "hint": exc.hint,
                "detail": exc.detail}
    return {"type": ERROR, "exit_code": 3, "message": f"{type(exc).__name__}: {exc}",
            "hint": f"Unexpected error in the {worker}.", "detail": traceback.format_exc()}


def parse_line(text: str) -> dict[str, Any] | None:
    """A protocol message, or None for anything else (a stray print() from user code)."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        msg = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(msg, dict) and msg.get("type") in MESSAGE_TYPES:
        return msg
    return None


_EOL = re.compile(r"\r\n|\r|\n")
PROTOCOL_LINE_LIMIT = 256 << 20      # one worker message: a stage snapshot of a real-sized model
TOOL_LINE_LIMIT = 1 << 20            # a build or simulator line


class LineSplitter:
    """Turns byte chunks into lines; tolerates invalid UTF-8 and any of \\n, \\r\\n, \\r.

    One splitter for every stream the product reads: worker stdout/stderr in the GUI, and the
    build and simulator output in backend_core.target.toolchain.process. A partial line longer than
    `max_partial` characters is emitted as it is (a runner printing megabytes without a newline).
    A protocol line is one stage's snapshot: 2.7 MB for timm's ghostnet_050 (1,451 nodes), so the
    default is far above any graph (at 1 MiB such stages were cut, unreadable, and the window kept
    them "pending"); build and simulator streams pass `TOOL_LINE_LIMIT`.
    """

    def __init__(self, max_partial: int = PROTOCOL_LINE_LIMIT) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self.max_partial = max_partial

    def feed(self, data: bytes, final: bool = False) -> list[str]:
        self._buf += self._decoder.decode(data, final)
        lines: list[str] = []
        pos = 0
        for m in _EOL.finditer(self._buf):
            if m.group() == "\r" and m.end() == len(self._buf) and not final:
                break  # maybe the first half of "\r\n": wait for the next chunk
            lines.append(self._buf[pos:m.start()])
            pos = m.end()
        self._buf = self._buf[pos:]
        if final and self._buf:
            lines.append(self._buf)
            self._buf = ""
        elif len(self._buf) > self.max_partial:
            lines.append(self._buf)
            self._buf = ""
        return lines
