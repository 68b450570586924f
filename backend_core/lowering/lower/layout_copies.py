"""--keep-going on a lowering that succeeded but whose pre-flight found what the lowered program itself can
be mended for: layout mismatches (dim-order copies, backend_core.stages.fallback.program_layout), int-list
arguments held as a bare int (backend_core.stages.fallback.program_args) and float linears no portable kernel
runs (addmm, backend_core.stages.fallback.program_linear). The edits are made on the lowered program,
then it is snapshotted, explained, serialised and checked again, all within the same round: no second
lowering for such a finding."""
from __future__ import annotations

from typing import Any, Callable

from backend_core.stages.fallback import FallbackContext, explain_fallbacks
from backend_core.stages.fallback import program_args, program_linear
from backend_core.stages.fallback.program_layout import DESCRIPTION, NAME, dim_order_copies, layout_findings
from backend_core.analyses.preflight import attach as attach_preflight, check_snapshot, findings_of
from backend_core.analyses.preflight.program_view import stored_dim_orders
from backend_core.common.snapshot.capture import capture
from backend_core.common.snapshot.model import GraphSnapshot


def copies_on_final(pipe: Any, target: str, flow: str, supported: frozenset[str], round_no: int,
                    serialise: Callable[[Any], bytes | None],
                    on_status: Callable[[str], None] | None,
                    program: bytes | None = None) -> tuple[dict[str, Any], bytes | None] | None:
    """Apply the copies to `pipe.final_program` when its final snapshot has layout findings: replaces the
    final snapshot (explained, with its new findings) and returns (the rewrite's record, the new .pte
    bytes); None when there was nothing to do."""
    final: GraphSnapshot = pipe.snapshots[-1]
    found = findings_of(final)
    todo = layout_findings(found)
    stored = stored_dim_orders(program, final) if todo and program is not None else {}
    done = dim_order_copies(pipe.final_program, todo, stored) if todo else {}
    lists = program_args.int_lists(pipe.final_program, found)
    linears = program_linear.linear_as_addmm(pipe.final_program, found)
    if not done and not lists and not linears:
        return None
    copies = sum(d["copies"] for d in done.values())
    if on_status and done:
        on_status(f"--keep-going: the pre-flight says {len(done)} op(s) meet a layout their kernel refuses or "
                  f"misreads; adding {copies} dim-order copies to the lowered program and checking it again")
    if on_status and lists:
        on_status(f"--keep-going: the pre-flight says {len(lists)} op(s) hold an int-list argument as a single int; "
                  f"writing it as a list in the lowered program")
    if on_status and linears:
        on_status(f"--keep-going: the pre-flight says {len(linears)} float linear(s) have no portable kernel; "
                  f"writing them as permute_copy + addmm/mm in the lowered program")
    snap = capture(pipe.final_program, final.stage, final.index, final.kind, final=True, seconds=final.seconds,
                   log=final.log, changed=True, runnable_on_host=final.runnable_on_host)
    pipe.snapshots[-1] = snap
    ctx = FallbackContext(list(pipe.snapshots), pipe.verdicts.to_dict(), target, flow, supported)
    pipe.snapshots[-1] = explain_fallbacks(ctx)
    program = serialise(pipe.final_program)
    attach_preflight(pipe.snapshots[-1], check_snapshot(pipe.snapshots[-1], program=program))
    records: dict[str, Any] = {}
    for name, made, text in ((NAME, done, DESCRIPTION), (program_args.NAME, lists, program_args.DESCRIPTION),
                             (program_linear.NAME, linears, program_linear.DESCRIPTION)):
        if not made:
            continue
        first = next(f for f in found if f.node in made)
        records[name] = {"stage": "pre-flight", "error": first.message, "check": first.check,
                         "check_at": first.source, "op": first.op, "round": round_no, "nodes": list(made),
                         "cause": first.message, "via": "pre-flight", "workaround": text, "producer": None,
                         "on": "the lowered program", "rules": sorted({d["rule"] for d in made.values()}),
                         **({"copies": copies} if name == NAME else {})}
    return records, program
