"""--keep-going: which ops to take out of quantisation after a pass failed, so the next lowering
gets past the failure. Bounded: at most MAX_ROUNDS lowerings in all.

The op to quarantine is the failing node's op at quantisation time (backend_core.stages.fallback.
pass_failure found it). When that op was not quantized in the first place (a float op that was fed
int8 tensors, e.g. a bmm after FoldAndAnnotateQParamsPass folded its dequantize away), its quantized
operands' producers are quarantined instead: that is what hands it the int8 tensors.

Before any quarantine, a failure whose diagnosis names a workaround the tool can make itself (a
rewrite of the float export that changes no value, backend_core.stages.fallback.rewrites) gets that
rewrite: the op then stays quantized, and the lowering it gives is the workaround verified."""
from __future__ import annotations

from typing import Any, Callable

MAX_ROUNDS = 8


def _record(failure: dict[str, Any], round_no: int, via: str = "") -> dict[str, Any]:
    return {"stage": failure.get("stage"), "error": failure.get("error"), "check": failure.get("check"),
            "check_at": failure.get("check_at"), "op": failure.get("op"), "source": failure.get("source"),
            "code": failure.get("code"), "module": failure.get("module"), "round": round_no,
            "cause": failure.get("cause", ""), "via": via}


def next_rewrite(failure: dict[str, Any] | None, applied: dict[str, Any], round_no: int) -> dict[str, Any]:
    """{rewrite name: why} to apply in the next round, or {} (none named, or it was applied already)."""
    fix = (failure or {}).get("workaround") or ""
    if not fix or fix in applied:
        return {}
    rec = _record(failure or {}, round_no)
    rec["workaround"] = (failure or {}).get("workaround_text", "")
    rec["producer"] = (failure or {}).get("producer")
    return {fix: rec}


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
        out: dict[str, dict[str, Any]] = {op: _record(failure, round_no)}
        for other in failure.get("same_failure") or []:     # the same ExecuTorch check fails on them too
            if other not in quarantined and other in accepted:
                out[other] = _record(failure, round_no, via=f"it fails the same check as `{op}`")
        return out
    out = {}
    for o in failure.get("operands") or []:
        name = o.get("name_at_quantisation")
        dtype = o.get("dtype") or ""
        if name and name not in quarantined and not dtype.startswith("float"):
            out[name] = _record(failure, round_no, via=f"operand {o.get('index')} of `{op}` ({dtype})")
    if not out and op and op not in quarantined:
        out[op] = _record(failure, round_no)
    return out



def _target_fixes() -> list[tuple[str, Callable[[Any], bool]]]:
    """(rewrite, which pre-flight findings it avoids), in the order they claim findings."""
    from backend_core.stages.fallback.rewrites import (CAT_CONTIGUOUS, CL_AFTER_VIEWS, CL_INTO_CONVS, FEWER_DIMS,
                                     NORMS_CONTIGUOUS, PERMUTE_CONTIGUOUS)

    def blind(f: Any, op: str) -> bool:
        return f.rule == "cmsis-ignores-dim-order" and op in f.op

    return [(CAT_CONTIGUOUS, lambda f: f.rule == "layout-ignored" and "cat" in f.op),
            (PERMUTE_CONTIGUOUS, lambda f: (f.rule == "dim-order-mismatch" and "permute" in f.op)
             or blind(f, "transpose")),
            (CL_INTO_CONVS, lambda f: f.rule == "cmsis-needs-channels-last" and "conv" in f.op),
            (CL_AFTER_VIEWS, lambda f: blind(f, "quantized_add") or blind(f, "quantized_mul")
             or (f.rule == "cmsis-needs-channels-last" and "conv" in f.op)
             or f.rule in ("dim-order-mismatch", "view-of-channels-last")),
            (FEWER_DIMS, lambda f: f.rule == "cmsis-unsupported-rank"),
            (NORMS_CONTIGUOUS, lambda f: f.rule == "needs-contiguous" and "norm" in f.op)]


def next_target_rewrite(findings: list[Any], applied: dict[str, Any], round_no: int) -> dict[str, Any]:
    """A lowering that succeeded but that the pre-flight says WILL fail or give wrong values on the target:
    the value-preserving rewrites that avoid it, each applied once, all that apply in one round (a finding
    goes to the first rewrite that matches it). A portable cat of channels-last tensors (layout-ignored) →
    cat_through_contiguous; a permute of a channels-last input (dim-order-mismatch on the portable
    permute_copy, cmsis-ignores-dim-order on cortex_m.transpose) → permute_through_contiguous; a CMSIS-NN
    conv fed a contiguous view (cmsis-needs-channels-last) → channels_last_into_convs; then a CMSIS-NN
    add/mul of mixed layouts, a conv still fed NCHW, or a portable kernel meeting mixed dim orders, →
    channels_last_after_views; a cortex_m
    transpose of more than 4 dims (cmsis-unsupported-rank) → permute_in_fewer_dims."""
    claimed: set[str] = set()
    out: dict[str, Any] = {}
    for name, matches in _target_fixes():
        if name in applied:
            continue
        hits = [f for f in findings if f.certain and matches(f) and f.node not in claimed]
        if not hits:
            continue
        claimed.update(f.node for f in hits)
        first = hits[0]
        out[name] = {"stage": "pre-flight", "error": first.message, "check": first.check,
                     "check_at": first.source, "op": first.op, "round": round_no,
                     "nodes": [f.node for f in hits], "cause": first.message, "via": "pre-flight",
                     "workaround": first.fix, "producer": None}
    return out


def next_target_quarantine(findings: list[Any], user_op: Callable[[str], str | None],
                           quarantined: dict[str, Any], round_no: int) -> dict[str, dict[str, Any]]:
    """A lowering that succeeded but whose CMSIS-NN add/mul the pre-flight says WILL abort on the target
    (an operand ExecuTorch never quantized, rule cmsis-needs-int8): the ops the user wrote for them
    (`user_op(final node id)`: the name at quantisation time), to leave in float in the next round."""
    out: dict[str, dict[str, Any]] = {}
    for f in findings:
        if not (f.certain and f.rule == "cmsis-needs-int8"):
            continue
        name = user_op(f.node)
        if name and name not in quarantined and name not in out:
            out[name] = {"stage": "pre-flight", "error": f.message.split(": ExecuTorch rewrote")[0],
                         "check": f.check, "check_at": f.source, "op": f.op, "round": round_no,
                         "cause": f.message, "via": "the pre-flight's cmsis-needs-int8 rule"}
    return out
