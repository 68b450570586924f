"""The schedule section in words: the two floors, the Pareto front, the chosen schedule (what
`cmlens memory --schedule` prints; the window gets the same dict as JSON)."""
from __future__ import annotations

from typing import Any

from backend_core.target.memory.fit import kib


def _grid(c: dict[str, Any]) -> str:
    return f"{c['grid'][0]}×{c['grid'][1]}"


def _row(c: dict[str, Any], plain_total: int) -> str:
    m = c["measured"]
    ratio = plain_total / max(c["total_ram_bytes"], 1)
    io = f" + I/O outside {kib(m['io_outside_bytes'])}" if m["io_outside_bytes"] else ""
    io += f"; Method::load {kib(m['method_load_bytes'])}" if m.get("method_load_bytes") else ""
    check = {True: "bit-exact", False: "DIFFERS", None: "not checked"}[c.get("bit_exact")]
    return (f"  {kib(c['total_ram_bytes']):>12} ({ratio:4.2f}× less)  arena {kib(m['arena_bytes'])}{io}; "
            + (f"{c['split']} in {_grid(c)} patches" if c["split"] else "no patches")
            + f", {c['input_dtype']} input, planner {c['planner']}; "
            f"+{100 * c['extra_macs']:.1f} % MACs, copies {kib(c['copy_bytes'])}, flash {c['flash_delta']:+,} B; "
            f"{check} on the host")


def schedule_lines(s: dict[str, Any]) -> list[str]:
    plain = s["plain"]
    total = plain["total_ram_bytes"]
    lines = [f"schedule: unscheduled total RAM {kib(total)} (arena {kib(plain['arena_bytes'])}"
             + (f" + I/O outside {kib(plain['io_outside_bytes'])}" if plain["io_outside_bytes"] else "") + ")",
             f"  floor, layer by layer: {kib(s['layer_floor_bytes'])} (live tensors at {s['layer_floor_op']})"]
    if s.get("patch_floor_split"):
        lines.append(f"  floor, patch schedule: {kib(s['patch_floor_bytes'])} (split at {s['patch_floor_split']}: "
                     "the input and the split tensor whole, or the largest op after it)")
    lines.append(f"  patchable region ends: {s['why_region_ends']}" if s.get("why_region_ends") else "")
    skipped = s.get("skipped") or 0
    lines.append(f"Pareto front (total RAM = arena + input/output buffers outside it; {s['tried']} candidates"
                 + (f", {skipped} not serialised: their RAM-need floor already lost" if skipped else "") + "):")
    lines += [_row(c, total) for c in s["front"]]
    lines += [f"  dropped: {d}" for d in s.get("dropped", [])]
    c = s["chosen"]
    q = c.get("input_quant")
    lines.append("chosen: " + _row(c, total).strip())
    if q:
        lines.append(f"  input: int8, q = round(x / {q['scale']:.9g}) + {q['zero_point']} clamped to "
                     f"[{q['qmin']}, {q['qmax']}] (the caller quantizes; bit-exactness is judged from this input on)")
    found = s.get("preflight")
    if found is not None:
        lines.append("pre-flight of the scheduled program: " + (
            "no finding (dim orders, kernels, arguments as the target checks them)" if not found else
            f"{len(found)} finding(s):"))
        lines += [f"  {f['certainty']}: {f['node']}: {f['message']}" for f in found[:8]]
    return [line for line in lines if line]
