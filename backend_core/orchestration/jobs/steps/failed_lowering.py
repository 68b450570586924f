"""The one wording of a failed lowering, shared by the lower step and the run's program (a lowering that
did not finish has nothing to build): its own module, so neither imports the other."""
from __future__ import annotations

from typing import Any

from backend_core.common.errors import StageFailedError


def lowering_failed(source: str, lowering: Any, hint: str = "") -> StageFailedError:
    """The one wording of a failed lowering (exit 3), with its stage and node; its detail (which every CLI
    command prints as the error's last output) is the failure in the user's terms (the op, the line that
    made it, the calls to it) in default mode, and ExecuTorch's traceback with --verbose: a default-mode
    output never shows a Python traceback (the lowering's own record keeps it, `cmlens lower --json`)."""
    from backend_core.stages.pipeline.logs import verbose_logging

    err = lowering.error or {}
    detail = err.get("traceback", "")
    if not verbose_logging():
        from backend_core.stages.fallback.pass_failure import failure_lines

        detail = "\n".join(failure_lines(err["failure"])) if err.get("failure") else ""
    return StageFailedError(err.get("stage", "?"), f"Lowering {source} failed at {err.get('stage', '?')}: "
                            f"{err.get('message', lowering.status)}", err.get("hint", "") or hint,
                            node=err.get("node"), detail=detail)
