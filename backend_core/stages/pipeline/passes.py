"""The Cortex-M pass list for a flow, and how to run one pass the way
CortexMPassManager.transform() does (so stepping gives node-for-node the same graph)."""
from __future__ import annotations

import inspect
from typing import Any

FLOWS = ("legacy", "explicit")


def pass_list(flow: str) -> list[type]:
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager

    return list(CortexMPassManager.explicit_layout_pass_list if flow == "explicit"
                else CortexMPassManager.legacy_pass_list)


def stage_names(passes: list[type]) -> list[str]:
    """Pass class names; a pass that appears twice gets ' #2'."""
    seen: dict[str, int] = {}
    names = []
    for p in passes:
        seen[p.__name__] = seen.get(p.__name__, 0) + 1
        names.append(p.__name__ if seen[p.__name__] == 1 else f"{p.__name__} #{seen[p.__name__]}")
    return names


def run_pass(pass_cls: type, program: Any, target_config: Any) -> Any:
    """Instantiate with the same keyword arguments as CortexMPassManager.transform()."""
    from executorch.exir.program._program import _transform

    params = inspect.signature(pass_cls).parameters
    kwargs: dict[str, Any] = {}
    if "exported_program" in params:
        kwargs["exported_program"] = program
    if "target_config" in params:
        kwargs["target_config"] = target_config
    return _transform(program, pass_cls(**kwargs))


def host_runnable(pass_names: list[str]) -> list[bool]:
    """Stages from FoldAndAnnotateQParams up to (not including) AtenToCortexM hold int8 tensors
    flowing into float ATen kernels: they cannot run on the host."""
    out, inside = [], False
    for name in pass_names:
        if name.startswith("FoldAndAnnotateQParamsPass"):
            inside = True
        if name.startswith("AtenToCortexMPass"):
            inside = False
        out.append(not inside)
    return out
