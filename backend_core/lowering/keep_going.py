"""--keep-going: which ops to take out of quantisation after a pass failed, so the next lowering
gets past the failure. Bounded: at most MAX_ROUNDS lowerings in all.

The op to quarantine is the failing node's op at quantisation time (backend_core.fallback.
pass_failure found it). When that op was not quantized in the first place (a float op that was fed
int8 tensors, e.g. a bmm after FoldAndAnnotateQParamsPass folded its dequantize away), its quantized
operands' producers are quarantined instead: that is what hands it the int8 tensors."""
from __future__ import annotations

from typing import Any

MAX_ROUNDS = 5


def _record(failure: dict[str, Any], round_no: int, via: str = "") -> dict[str, Any]:
    return {"stage": failure.get("stage"), "error": failure.get("error"), "check": failure.get("check"),
            "check_at": failure.get("check_at"), "op": failure.get("op"), "source": failure.get("source"),
            "code": failure.get("code"), "module": failure.get("module"), "round": round_no,
            "cause": failure.get("cause", ""), "via": via}


def next_quarantine(failure: dict[str, Any] | None, quarantined: dict[str, Any], accepted: dict[str, str],
                    round_no: int) -> dict[str, dict[str, Any]]:
    """New {node name at quantisation time: why} entries, or {} when nothing more can be done
    (no node traced, or everything it points at is already quarantined)."""
    if not failure:
        return {}
    op = failure.get("op_node")
    chosen = {n: why for n, why in (failure.get("quarantine") or {}).items() if n not in quarantined}
    if chosen:           # the diagnosis named what hands the op what it cannot take
        return {n: _record(failure, round_no, via=why) for n, why in chosen.items()}
    if op and op not in quarantined and op in accepted:
        out = {op: _record(failure, round_no)}
        for other in failure.get("same_failure") or []:     # the same ExecuTorch check fails on them too
            if other not in quarantined and other in accepted:
                out[other] = _record(failure, round_no, via=f"it fails the same check as `{op}`")
        return out
    out: dict[str, dict[str, Any]] = {}
    for o in failure.get("operands") or []:
        name = o.get("name_at_quantisation")
        dtype = o.get("dtype") or ""
        if name and name not in quarantined and not dtype.startswith("float"):
            out[name] = _record(failure, round_no, via=f"operand {o.get('index')} of `{op}` ({dtype})")
    if not out and op and op not in quarantined:
        out[op] = _record(failure, round_no)
    return out
