"""The memory section of a finished lowering (what the JSON report and the lowering worker carry).
The memory of a model source (it lowers) is backend_core.orchestration.jobs.steps.memory."""
from __future__ import annotations

from typing import Any

from backend_core.common.boards.specs import BoardSpec
from backend_core.target.memory.report import analyze_memory


def memory_for_result(result: Any, board: BoardSpec | None = None) -> dict[str, Any] | None:
    """The `memory` section of a finished LoweringResult that carries its `.pte` (None otherwise): what
    the JSON report and the lowering worker's `done` message carry, so the GUI never parses a .pte."""
    if getattr(result, "status", None) != "done" or "model.pte" not in getattr(result, "blobs", {}):
        return None
    rep = analyze_memory(result.blobs["model.pte"], result.final, board=board, target=result.options.target)
    rep["model"] = result.model
    return rep
