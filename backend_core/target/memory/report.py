"""The `memory` section: one JSON-ready dict built from a `.pte` (+ the final snapshot for node names,
+ a board for the verdict, + a runner ELF for its code and static RAM), and its text summary."""
from __future__ import annotations

from typing import Any

from backend_core.common.boards.specs import BoardSpec
from backend_core.target.memory.method_alloc import estimate_method_allocator
from backend_core.target.memory.method_alloc import etdump_base64_bound, etdump_bytes_bound
from backend_core.target.memory.plan import ProgramPlan, read_plan
from backend_core.target.memory.runtime import RuntimeSize, from_elf, runtime_lines
from backend_core.target.memory.timeline import build_timeline
from backend_core.target.memory.fit import Need, kib, model_needs, place_needs

SCHEMA = 1


def analyze_memory(pte: bytes, final: Any | None = None, *, board: BoardSpec | None = None,
                   target: str = "", elf: dict[str, int] | None = None, etdump_intermediates: bool = False,
                   bundled_inputs: bool = True, plan: ProgramPlan | None = None) -> dict[str, Any]:
    """Everything the memory panel, `cmlens memory` and the report show, as plain data (bytes)."""
    plan = plan or read_plan(pte)
    tl = build_timeline(plan, final)
    est = estimate_method_allocator(plan, temp_pool=0x200000, etdump_intermediates=etdump_intermediates,
                                    bundled_inputs=bundled_inputs)
    nodes = final.node_map() if final is not None else {}
    peak = tl.peak_step
    rep: dict[str, Any] = {
        "schema": SCHEMA, "units": "bytes", "target": target, "method": plan.method,
        "planned_bytes": plan.planned_bytes,
        "arena_bytes": sum(plan.planned_bytes),
        "constant_bytes": plan.constant_bytes,
        "pte_bytes": plan.pte_bytes,
        "program_bytes": plan.pte_bytes - plan.constant_bytes,
        "peak_op": peak.node if peak else None,
        "peak_index": tl.peak_index,
        "peak_bytes": tl.peak_bytes,
        "timeline": [s.to_dict() for s in tl.steps],
        "method_allocator": est.to_dict(),
        "temp_allocator_bytes": est.temp_pool_min,
        "scratch": [{"node": s.node, "op": s.op, "bytes": s.scratch_bytes} for s in tl.steps if s.scratch_bytes],
        "scratch_bytes_max": max((s.scratch_bytes for s in tl.steps), default=0),
        "largest_tensors": tl.largest,
        "float_islands": [i.to_dict() for i in tl.islands],
        "constants_by_node": sorted(({"node": s.node, "op": s.op, "bytes": s.constant_bytes}
                                     for s in tl.steps if s.constant_bytes), key=lambda r: -r["bytes"]),
        "float_constant_bytes": sum(plan.constant_sizes.get(t.constant_buffer, t.nbytes)
                                    for t in plan.tensors.values()
                                    if t.constant_buffer and t.dtype in ("float32", "float64")),
        "elf": elf,
        # the portable/cortex_m operators the runner must register (the runtime's op set)
        "operators": sorted({i.op for i in plan.instructions if i.op}),
        # the base64 ETDump buffer the runner (built with the event tracer) takes after the run
        "etdump_base64_bytes": etdump_base64_bound(plan, 0),
        # the ETDump ETDumpGen builds on newlib's heap (flatcc's default allocator): sizes the heap
        "etdump_bytes": etdump_bytes_bound(plan),
        "runtime": from_elf(elf, target).to_dict() if elf else None,
        "board": None, "verdict": None, "suggestions": [],
    }
    rep["suggestions"] = suggestions(rep, nodes)
    if board is not None:
        attach_board(rep, board)
    return rep


def needs_of(rep: dict[str, Any]) -> list[Need]:
    ma = rep["method_allocator"]
    rt = rep.get("runtime")
    return model_needs(rep["planned_bytes"], ma["loaded"], ma["input"], rep["temp_allocator_bytes"],
                       rep["pte_bytes"], rep["constant_bytes"], rt,
                       rep.get("etdump_base64_bytes", 0) if rt and rt.get("event_tracer") else 0)


def attach_runtime(rep: dict[str, Any], runtime: RuntimeSize | dict[str, Any] | None) -> dict[str, Any]:
    """Set the report's `runtime` (code, .data/.bss, stack, heap around the model); attach the board
    afterwards (attach_board counts the runtime in the verdict)."""
    rep["runtime"] = runtime.to_dict() if isinstance(runtime, RuntimeSize) else runtime
    return rep


def attach_board(rep: dict[str, Any], board: BoardSpec) -> dict[str, Any]:
    """Set `board` and `verdict` of a memory report for `board` (a report is board-independent otherwise)."""
    v = place_needs(needs_of(rep), board)
    rep["board"] = board.to_dict()
    rep["verdict"] = v.to_dict()
    return rep


def suggestions(rep: dict[str, Any], nodes: dict[str, Any]) -> list[str]:
    out = []
    for isl in rep["float_islands"]:
        names = ", ".join(isl["nodes"]) or "?"
        line = (f"float island {names}: {kib(isl['float_bytes'])} of fp32 tensors alive at once, "
                f"{kib(isl['extra_vs_int8'])} more than int8 tensors of the same shapes"
                + (" (it holds the peak)" if isl["at_peak"] else ""))
        fix = next((nodes[n].fallback.suggestion for n in isl["nodes"]
                    if n in nodes and nodes[n].fallback is not None and nodes[n].fallback.suggestion), "")
        out.append(line + (f"; {fix}" if fix else ""))
    if rep["largest_tensors"]:
        t = rep["largest_tensors"][0]
        if t["bytes"] * 2 >= rep["peak_bytes"] > 0:
            out.append(f"the largest tensor ({kib(t['bytes'])}, {t['dtype']} {t['shape']}, from "
                       f"{t['node'] or 'an input'}) is half the peak or more: a smaller input shrinks it")
    if rep["float_constant_bytes"] > 0.25 * max(rep["constant_bytes"], 1) and rep["float_constant_bytes"] > 1024:
        out.append(f"{kib(rep['float_constant_bytes'])} of the constants are float: ops that keep float "
                   "weights are fallbacks; int8 kernels store them in a quarter of the bytes")
    return out


def summary_lines(rep: dict[str, Any], top: int = 5) -> list[str]:
    """The text `cmlens memory` prints."""
    ma = rep["method_allocator"]
    rt = rep.get("runtime")
    lines = [f"flash: .pte {kib(rep['pte_bytes'])} = constants {kib(rep['constant_bytes'])} + program "
             f"{kib(rep['program_bytes'])}" + (f"; runtime code + read-only data {kib(rt['code'] + rt['data'])}"
                                             if rt else ""),
             "RAM:   planned arena " + " + ".join(f"mem_id {i + 1}: {kib(b)}" for i, b in enumerate(rep["planned_bytes"]))
             + f" (scratch up to {kib(rep['scratch_bytes_max'])}, included)",
             f"       method allocator {kib(ma['used'])} = planned {kib(ma['planned'])} + Method::load "
             f"{kib(ma['loaded'])} + inputs {kib(ma['input'])}; temp pool {kib(rep['temp_allocator_bytes'])}",
             f"peak:  {kib(rep['peak_bytes'])} alive at op #{rep['peak_index']} "
             f"{rep['peak_op'] or (rep['timeline'][rep['peak_index']]['op'] if rep['timeline'] else '?')}"]
    if rep["largest_tensors"]:
        lines.append("largest tensors:")
        for t in rep["largest_tensors"][:top]:
            lines.append(f"  {kib(t['bytes']):>12}  {t['dtype']:8} {str(t['shape']):22} mem_id {t['mem_id']} "
                         f"@{t['offset']}  ops #{t['first']}-#{t['last']}  {t['node'] or ''}")
    if rep["constants_by_node"]:
        lines.append("largest constants (flash):")
        for c in rep["constants_by_node"][:top]:
            lines.append(f"  {kib(c['bytes']):>12}  {c['node'] or c['op']}")
    if rt:
        lines += runtime_lines(rt)
    v = rep.get("verdict")
    if v is not None:
        b = rep["board"]
        lines.append(f"board: {b['name']} ({kib(b['ram_bytes'])} RAM" +
                     (f", {kib(b['flash_bytes'])} flash)" if b["flash_bytes"] else ")"))
        for n in v["needs"]:
            lines.append(f"  {n['kind']:5} {kib(n['bytes']):>12}  {n['name']:30} -> {n['region'] or 'DOES NOT FIT'}"
                         f"   ({n['what']})")
        if v["fits"]:
            ff = v["flash_free_bytes"]
            lines.append(f"verdict: FITS — {kib(v['ram_free_bytes'])} RAM free"
                         + (f", {kib(ff)} flash free" if ff is not None else ""))
        else:
            lines.append("verdict: DOES NOT FIT — " + "; ".join(v["problems"]))
        lines += [f"  note: {n}" for n in v["notes"]]
    lines += [f"suggestion: {s}" for s in rep["suggestions"]]
    return lines
