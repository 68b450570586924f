"""Per-node figures of the final program for the inspector: memory (from the report's `memory`
section, ExecuTorch's own plan read from the .pte) and cost (MACs and bytes moved from shapes; the
measured count per op when the report carries a profile). Keyed by final-graph node id."""
from __future__ import annotations

from typing import Any

from backend_core.target.profile.costs import bytes_moved, macs
from backend_core.common.snapshot.model import GraphSnapshot


def memory_by_node(memory: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """{node: {step, live, float, scratch, island, out, const}} in bytes; {} without a memory section."""
    if not memory or "timeline" not in memory:
        return {}
    out: dict[str, dict[str, Any]] = {}
    arena = memory.get("arena_bytes")
    for s in memory["timeline"]:
        nid = s.get("node")
        if not nid:
            continue
        rec: dict[str, Any] = {"step": s["index"], "live": s["live_bytes"], "arena": arena}
        if s.get("float_bytes"):
            rec["float"] = s["float_bytes"]
        if s.get("scratch_bytes"):
            rec["scratch"] = s["scratch_bytes"]
        if s.get("in_float_island"):
            rec["island"] = True
        if s.get("out"):
            o = s["out"]
            rec["out"] = [o.get("bytes"), o.get("dtype"), o.get("mem_id"), o.get("offset")]
        if nid == memory.get("peak_op"):
            rec["peak"] = True
        out[nid] = rec
    for c in memory.get("constants_by_node") or []:
        if c.get("node"):
            out.setdefault(c["node"], {})["const"] = c["bytes"]
    return out


def profile_of(report: dict[str, Any]) -> dict[str, Any] | None:
    """A profile the report carries: `profile` (cmlens run / profile JSON), the job's run step's, or an
    ETDump overlay."""
    run = report.get("run")
    prof = report.get("profile") or (run.get("profile") if isinstance(run, dict) else None)
    if not prof:
        prof = ((report.get("artefact") or {}).get("overlay") or {}).get("profile")
    return prof if isinstance(prof, dict) and prof.get("ops") else None


def cost_by_node(final: GraphSnapshot, profile: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """{node: {macs, bytes, count, share, unit, ms}}: static work from shapes, measured counts if profiled,
    estimated milliseconds when the profile has a cycle estimate."""
    out: dict[str, dict[str, Any]] = {}
    for n in final.nodes:
        if n.fx_op != "call_function":
            continue
        rec: dict[str, Any] = {}
        m = macs(n, final)
        if m:
            rec["macs"] = m
        b = bytes_moved(n, final)
        if b:
            rec["bytes"] = b
        if rec:
            out[n.id] = rec
    if profile:
        unit = profile.get("unit") or "ticks"          # its label is in the bundle (`profile_unit`)
        for row in profile["ops"]:
            if row.get("node"):
                rec = out.setdefault(row["node"], {})
                rec["count"] = rec.get("count", 0) + int(row.get("count") or 0)
                rec["share"] = rec.get("share", 0.0) + float(row.get("share") or 0.0)
                rec["unit"] = unit
                if row.get("ms") is not None:          # the cycle estimate's milliseconds
                    rec["ms"] = rec.get("ms", 0.0) + float(row["ms"])
    return out
