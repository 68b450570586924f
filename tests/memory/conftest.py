"""Memory tests: each (model, target) is lowered once per session with the real pipeline into a
private cache, then serialised by ExecuTorch's own to_executorch() (the oracle the plan reader is
checked against)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "uart"


@dataclass
class Lowered:
    model: str
    target: str
    final: Any                 # final GraphSnapshot
    pte: bytes                 # the serialised program
    program: Any               # ExecuTorch's in-memory Program (executorch_program) of the same bytes


_MEMO: dict[tuple[str, str], Lowered] = {}


def lowered_program(model: str, target: str = "cortex-m55") -> Lowered:
    key = (model, target)
    if key not in _MEMO:
        from backend_core.lowering.lower import LowerOutputs, lower
        from backend_core.stages.pipeline.program_files import _executorch_manager
        from backend_core.stages.pipeline.stages import PipelineOptions

        res = lower(model, PipelineOptions(target=target), use_cache=False, outputs=LowerOutputs(edge_program=True))
        assert res.status == "done", res.error
        manager = _executorch_manager(res.pipeline.final_program)
        _MEMO[key] = Lowered(model, target, res.final, bytes(manager.buffer), manager.executorch_program)
    return _MEMO[key]
