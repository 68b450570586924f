"""Operator schemas for the kernels a program calls, from the installed libraries: the cortex_m
ops are registered by importing ExecuTorch's Cortex-M backend, aten comes with torch, and the
executorch_prim / dim_order ops with ExecuTorch's exir. A kernel the installed versions do not
know (a program from another ExecuTorch) gets positional names and is reported, not guessed.

The first time schemas are read from torch, the out-variant schemas of these namespaces (about
1,100) and AtenToCortexMPass's substitution table are written to a JSON file keyed by the
installed versions; later reads take them from there without importing torch (~8 s), which is
what lets a .pte open in well under a second (memory/pte_reader.py)."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMESPACES = ("aten", "cortex_m", "dim_order_ops", "executorch_prim", "quantized_decomposed")
TABLE_VERSION = "1"


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


_registered = False
_table: dict[str, Any] | None = None


def register_libraries() -> None:
    """Import what registers the schemas (ExecuTorch's Cortex-M ops import the backend's passes
    first: importing cortex_m.ops alone hits a circular import in 1.5.1)."""
    global _registered
    if _registered:
        return
    import executorch.backends.cortex_m.passes  # registers torch.ops.cortex_m
    import executorch.exir.passes.dim_order_ops_registry
    import executorch.exir.passes.executorch_prim_ops_registry  # noqa: F401
    _registered = True
    if cached_table() is None:
        save_table(build_table())


# The files that define the schemas and the substitution table this module reads (not compiled: they
# change with an editable install or a local patch, without a reinstall touching __init__).
SCHEMA_SOURCES = {
    "executorch": ("backends/cortex_m/ops/operators.py", "backends/cortex_m/ops/operators.yaml",
                   "backends/cortex_m/passes/aten_to_cortex_m_pass.py", "exir/passes/dim_order_ops_registry.py",
                   "exir/passes/executorch_prim_ops_registry.py"),
    "torch": ("ao/quantization/fx/_decomposed.py",),
    "torchao": (),
}


def installed_stamp() -> list[str]:
    """Which torch / ExecuTorch / torchao are installed, cheaply: each package's location, the
    modification time of its __init__ (a reinstall changes it) and the content of the Python files that
    define the schemas (SCHEMA_SOURCES: an edited operator definition changes it). importlib.metadata's
    first lookup costs 0.15 s here, a tenth of a .pte's whole read; these hashes ~1 ms."""
    import importlib.util

    out = []
    for name, sources in SCHEMA_SOURCES.items():
        spec = importlib.util.find_spec(name)
        origin = (spec.origin or next(iter(spec.submodule_search_locations or []), "")) if spec else ""
        base = Path(origin) if Path(origin).is_dir() else Path(origin).parent    # a namespace package: its folder
        h = hashlib.sha1()
        for rel in sources:
            try:
                h.update(rel.encode() + b"\0" + (base / rel).read_bytes())
            except OSError:
                h.update(rel.encode() + b"\0missing")
        try:
            out.append(f"{name}:{origin}:{os.stat(origin).st_mtime_ns}:{h.hexdigest()}")
        except OSError:
            out.append(f"{name}:{origin}:{h.hexdigest()}")
    return out


def ensure_table() -> None:
    """Write the schema table if this stack has none yet (torch is already imported by the caller: a
    lowering worker). A failure costs only the next .pte open its torch import, so it is logged, not raised."""
    if cached_table() is not None:
        return
    try:
        register_libraries()
    except Exception as e:  # noqa: BLE001 - see the docstring
        print(f"cmlens: could not write the operator schema table: {type(e).__name__}: {e}", file=sys.stderr)


def table_path() -> Path:
    from backend_core.stages.cache import cache_root

    key = hashlib.sha1(json.dumps([TABLE_VERSION, installed_stamp()]).encode()).hexdigest()[:16]
    return cache_root() / "schemas" / f"{key}.json"


def cached_table() -> dict[str, Any] | None:
    """The schema table of the installed versions, or None before torch was ever asked."""
    global _table
    if _table is None:
        try:
            _table = json.loads(table_path().read_text())
        except (OSError, ValueError):
            return None
    return _table


def _spec(schema: Any) -> dict[str, Any]:
    name, overload = schema.name, schema.overload_name or "default"
    return {"text": str(schema), "functional": _functional(name, overload),
            "args": [[a.name, str(a.type), bool(a.alias_info is not None and a.alias_info.is_write and a.kwarg_only)]
                     for a in schema.arguments], "n_returns": len(schema.returns)}


def _functional(name: str, overload: str) -> str:
    ns, op = name.split("::", 1)
    base = overload.removesuffix("_out").removesuffix("out").rstrip("_") or "default"
    return f"{ns}.{op}.{base}"


def build_table() -> dict[str, Any]:
    import torch

    from backend_core.common.snapshot.capture import target_name
    from backend_core.common.snapshot.classify import op_base_name

    ops = {}
    for s in torch._C._jit_get_all_schemas():
        ns = s.name.split("::")[0]
        if ns in NAMESPACES and ("out" in s.overload_name or ns in ("cortex_m", "executorch_prim")):
            ops[f"{s.name}.{s.overload_name or 'default'}"] = _spec(s)
    from executorch.backends.cortex_m.passes.aten_to_cortex_m_pass import AtenToCortexMPass

    subs = sorted({op_base_name(target_name(t)) for t in AtenToCortexMPass._DIALECT_SUBSTITUTIONS})
    return {"version": TABLE_VERSION, "ops": ops, "substitutions": subs}


def save_table(table: dict[str, Any]) -> None:
    global _table
    _table = table
    p = table_path()
    try:
        from backend_core.common.files import write_atomic

        p.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(p, json.dumps(table))
    except OSError:
        pass                     # a read-only cache only costs the next open its torch import


def _from_spec(d: dict[str, Any]) -> KernelSchema:
    return KernelSchema(d["text"], d["functional"], tuple(ArgSpec(*a) for a in d["args"]), int(d["n_returns"]))


def kernel_schema(name: str, overload: str, *, allow_import: bool = True) -> KernelSchema | None:
    """Schema of `name.overload` (e.g. "cortex_m::quantized_linear", "out"), or None if unknown.
    From the version-keyed table when it has it; else (allow_import) from torch's registry."""
    key = f"{name}.{overload or 'default'}"
    table = cached_table()
    if table is not None and key in table["ops"]:
        return _from_spec(table["ops"][key])
    if not allow_import or "::" not in name:
        return None
    import torch

    register_libraries()
    ns, op_name = name.split("::", 1)
    try:
        schema = getattr(getattr(getattr(torch.ops, ns), op_name), overload or "default")._schema
    except (AttributeError, RuntimeError):
        return None
    spec = _spec(schema)
    table = cached_table()
    if table is not None:
        table["ops"][key] = spec
        save_table(table)
    return _from_spec(spec)


def known_without_torch(operators: list[tuple[str, str]]) -> bool:
    """True when the table has every (name, overload) a program calls: it can be read torch-free."""
    table = cached_table()
    return table is not None and all(f"{n}.{o or 'default'}" in table["ops"] for n, o in operators)


def substitution_bases() -> frozenset[str]:
    """Base names of the aten ops AtenToCortexMPass can rewrite in the installed ExecuTorch."""
    table = cached_table()
    if table is None:
        register_libraries()
        table = cached_table() or build_table()
    return frozenset(table["substitutions"])
