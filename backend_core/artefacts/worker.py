"""The lowering worker's path for an artefact (`python -m backend_core.workers.lowering model.pte`):
the same protocol lines as a lowering (planned, stage, result, done), without importing the lowering
pipeline, so a .pte is on screen in about a second."""
from __future__ import annotations

import json
from pathlib import Path

from ..protocol import DONE, PLANNED, RESULT, STAGE, STATUS, emit, error_message
from .open import open_artefact


def run_artefact(source: str, companions: dict[str, str], *, use_cache: bool = True, report: str | None = None,
                 pte: str | None = None) -> int:
    try:
        res = open_artefact(source, use_cache=use_cache,
                            on_planned=lambda names: emit({"type": PLANNED, "stages": names}),
                            on_stage=lambda s: emit({"type": STAGE, "snapshot": s.to_dict()}),
                            on_status=lambda t: emit({"type": STATUS, "text": t}), **companions)
    except Exception as e:  # noqa: BLE001 - report anything, never die silently
        msg = error_message(e, "lowering worker")
        emit(msg)
        return msg["exit_code"]
    emit({"type": RESULT, "result": {"artefact": res.extras()}})
    if report:
        Path(report).write_text(json.dumps(res.report(), default=str))
    if pte and res.program:
        Path(pte).expanduser().write_bytes(res.program)
    emit({"type": DONE, "status": "done", "error": None, "verdicts": {}, "from_cache": res.from_cache,
          "seconds": res.seconds, "report": report})
    return 0
