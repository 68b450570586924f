"""--keep-going on a lowering that succeeded but whose pre-flight found layout mismatches: make the
dim-order copies on the lowered program (backend_core.fallback.program_layout), then snapshot, explain,
serialise and check it again, all within the same round — no second lowering for a layout finding."""
from __future__ import annotations

from typing import Any, Callable

from ..fallback import FallbackContext, explain_fallbacks
from ..fallback.program_layout import DESCRIPTION, NAME, dim_order_copies, layout_findings
from ..preflight import attach as attach_preflight, check_snapshot, findings_of
from ..snapshot.capture import capture
from ..snapshot.model import GraphSnapshot


def copies_on_final(pipe: Any, target: str, flow: str, supported: frozenset[str], round_no: int,
                    serialise: Callable[[Any], bytes | None],
                    on_status: Callable[[str], None] | None) -> tuple[dict[str, Any], bytes | None] | None:
    """Apply the copies to `pipe.final_program` when its final snapshot has layout findings: replaces the
    final snapshot (explained, with its new findings) and returns (the rewrite's record, the new .pte
    bytes); None when there was nothing to do."""
    final: GraphSnapshot = pipe.snapshots[-1]
    todo = layout_findings(findings_of(final))
    if not todo:
        return None
    done = dim_order_copies(pipe.final_program, todo)
    if not done:
        return None
    copies = sum(d["copies"] for d in done.values())
    if on_status:
        on_status(f"--keep-going: the pre-flight says {len(done)} op(s) meet a layout their kernel refuses or "
                  f"misreads; adding {copies} dim-order copies to the lowered program and checking it again")
    snap = capture(pipe.final_program, final.stage, final.index, final.kind, final=True, seconds=final.seconds,
                   log=final.log, changed=True, runnable_on_host=final.runnable_on_host)
    pipe.snapshots[-1] = snap
    ctx = FallbackContext(list(pipe.snapshots), pipe.verdicts.to_dict(), target, flow, supported)
    pipe.snapshots[-1] = explain_fallbacks(ctx)
    program = serialise(pipe.final_program)
    attach_preflight(pipe.snapshots[-1], check_snapshot(pipe.snapshots[-1], program=program))
    first = todo[0]
    record = {"stage": "pre-flight", "error": first.message, "check": first.check, "check_at": first.source,
              "op": first.op, "round": round_no, "nodes": list(done), "cause": first.message, "via": "pre-flight",
              "workaround": DESCRIPTION, "producer": None, "on": "the lowered program", "copies": copies,
              "rules": sorted({d["rule"] for d in done.values()})}
    return {NAME: record}, program
