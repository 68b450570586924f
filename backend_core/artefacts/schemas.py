"""Operator schemas for the kernels a program calls, from the installed libraries: the cortex_m
ops are registered by importing ExecuTorch's Cortex-M backend, aten comes with torch, and the
executorch_prim / dim_order ops with ExecuTorch's exir. A kernel the installed versions do not
know (a program from another ExecuTorch) gets positional names and is reported, not guessed."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str
    is_out: bool          # written by the kernel (`Tensor(a!) out`)


@dataclass(frozen=True)
class KernelSchema:
    text: str
    functional: str       # the functional overload's target, e.g. cortex_m.quantized_linear.default
    args: tuple[ArgSpec, ...]
    n_returns: int
    op: Any = None        # the OpOverload (requant decoding reads its _schema)


_registered = False


def register_libraries() -> None:
    """Import what registers the schemas (ExecuTorch's Cortex-M ops import the backend's passes
    first: importing cortex_m.ops alone hits a circular import in 1.5.1)."""
    global _registered
    if _registered:
        return
    import executorch.backends.cortex_m.passes  # noqa: F401  registers torch.ops.cortex_m
    import executorch.exir.passes.dim_order_ops_registry  # noqa: F401
    import executorch.exir.passes.executorch_prim_ops_registry  # noqa: F401
    _registered = True


@lru_cache(maxsize=None)
def kernel_schema(name: str, overload: str) -> KernelSchema | None:
    """Schema of `name.overload` (e.g. "cortex_m::quantized_linear", "out"), or None if unknown."""
    import torch

    register_libraries()
    if "::" not in name:
        return None
    ns, op_name = name.split("::", 1)
    try:
        packet = getattr(getattr(torch.ops, ns), op_name)
        op = getattr(packet, overload or "default")
        schema = op._schema
    except (AttributeError, RuntimeError):
        return None
    args = tuple(ArgSpec(a.name, str(a.type), bool(a.alias_info is not None and a.alias_info.is_write
                                                  and a.kwarg_only)) for a in schema.arguments)
    functional = f"{ns}.{op_name}.default"
    if overload not in ("out", "default"):
        base = overload.removesuffix("_out")
        if base and base != overload and base in packet.overloads():
            functional = f"{ns}.{op_name}.{base}"
        elif overload.endswith("out") and "default" not in packet.overloads():
            others = [o for o in packet.overloads() if "out" not in o]
            functional = f"{ns}.{op_name}.{others[0]}" if others else f"{ns}.{op_name}.{overload}"
    elif overload == "out" and "default" not in packet.overloads():
        others = [o for o in packet.overloads() if "out" not in o]
        if others:
            functional = f"{ns}.{op_name}.{others[0]}"
    return KernelSchema(str(schema), functional, args, len(schema.returns), op)
