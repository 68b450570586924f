"""The one wording of a failed lowering, shared by the lower step and the run's program (a lowering that
did not finish has nothing to build): its own module, so neither imports the other."""
from __future__ import annotations

from typing import Any

from ..errors import StageFailedError


def lowering_failed(source: str, lowering: Any, hint: str = "") -> StageFailedError:
    """The one wording of a failed lowering (exit 3), with its stage, node and ExecuTorch's traceback."""
    err = lowering.error or {}
    return StageFailedError(err.get("stage", "?"), f"Lowering {source} failed at {err.get('stage', '?')}: "
                            f"{err.get('message', lowering.status)}", err.get("hint", "") or hint,
                            node=err.get("node"), detail=err.get("traceback", ""))
