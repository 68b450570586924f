"""Walks over the last good stage that the pass-failure rules share: where a float tensor the pass
treats as quantized comes from, and an op described in the user's terms."""
from __future__ import annotations

from typing import Any

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.stages.fallback.user_op import UserOpResolver


def user_op_dict(resolver: UserOpResolver, n: NodeSnapshot) -> dict[str, Any]:
    """The op `n` in the user's terms: its op and name at quantisation time, line, code, module."""
    q = resolver.quantized_node(n)
    src = (q.source if q is not None else None) or n.source
    return {"node": n.id, "op": n.target, "op_at_quantisation": q.target if q is not None else None,
            "name_at_quantisation": q.name if q is not None else None,
            "source": src.full if src else None, "code": src.code if src else "",
            "module": (q.module_path if q is not None else n.module_path),
            "dim_order": list(n.dim_order) if n.dim_order is not None else None}


def is_float(dtype: str | None) -> bool:
    return (dtype or "").startswith("float") or (dtype or "") in ("bfloat16", "half")


def float_origin(last: GraphSnapshot, start: NodeSnapshot) -> NodeSnapshot | None:
    """Walk up from a float tensor that the pass treats as quantized (it carries int8 output qparams,
    or is a getitem of one) to the first producer whose float output has no output qparams: where the
    quantized chain was broken."""
    cur, seen = start, 0
    while cur is not None and seen < 16:
        seen += 1
        if cur.output_qparams is None and cur.target != "getitem":
            return cur
        src = next((n for n in (last.node(i) for i in cur.inputs) if n is not None and n.fx_op == "call_function"),
                   None)
        if src is None or not is_float(src.dtype):
            return cur
        cur = src
    return None


def where_text(op: dict[str, Any]) -> str:
    """A user_op_dict as one phrase: op and name at quantisation time, module, file:line and code."""
    return ", ".join(x for x in (
        f"{op['op_at_quantisation']} `{op['name_at_quantisation']}` at quantisation time"
        if op.get("op_at_quantisation") else "", f"module {op['module']}" if op.get("module") else "",
        f"{op['source']}: {op['code']}" if op.get("source") else "") if x)
