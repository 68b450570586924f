"""The memory section of the standalone HTML report: the same numbers as `cmlens memory`, as tables,
plus an inline SVG of the live bytes per op (no JavaScript, no external files)."""
from __future__ import annotations

import html
from typing import Any

from backend_core.target.memory.fit import kib


def _e(x: Any) -> str:
    return html.escape(str(x))


def _svg(rep: dict[str, Any], w: int = 760, h: int = 160) -> str:
    steps = rep["timeline"]
    if not steps:
        return ""
    top = max(rep["arena_bytes"], max(s["live_bytes"] for s in steps), 1) * 1.15
    bw = w / len(steps)
    bars = []
    for i, s in enumerate(steps):
        bh = s["live_bytes"] / top * h
        color = "#e53935" if s["in_float_island"] else ("#d81b60" if i == rep["peak_index"] else "#1e88e5")
        bars.append(f"<rect x='{i * bw:.1f}' y='{h - bh:.1f}' width='{max(bw - 1, 1):.1f}' height='{bh:.1f}' "
                    f"fill='{color}'><title>#{i} {_e(s['node'] or s['op'])}: {s['live_bytes']:,} B</title></rect>")
    ay = h - rep["arena_bytes"] / top * h
    return (f"<svg width='{w}' height='{h}' style='border:1px solid #ccc'>" + "".join(bars)
            + f"<line x1='0' x2='{w}' y1='{ay:.1f}' y2='{ay:.1f}' stroke='#546e7a' stroke-dasharray='4 3'/>"
            + f"<text x='4' y='{max(ay - 3, 10):.1f}' font-size='10' fill='#546e7a'>planned arena "
            f"{rep['arena_bytes']:,} B</text></svg>")


def memory_html(rep: dict[str, Any]) -> str:
    ma = rep["method_allocator"]
    parts = ["<h2>Memory</h2>",
             "<table><tr><th>what</th><th>bytes</th><th></th></tr>",
             f"<tr><td>.pte (flash)</td><td>{rep['pte_bytes']:,}</td><td>constants {rep['constant_bytes']:,} + "
             f"program {rep['program_bytes']:,}</td></tr>"]
    for i, b in enumerate(rep["planned_bytes"]):
        parts.append(f"<tr><td>planned arena, memory id {i + 1}</td><td>{b:,}</td><td>CMSIS-NN scratch included "
                     f"(largest {rep['scratch_bytes_max']:,})</td></tr>")
    parts.append(f"<tr><td>method allocator (stock Arm runner)</td><td>{ma['used']:,}</td><td>planned {ma['planned']:,}"
                 f" + Method::load {ma['loaded']:,} + inputs {ma['input']:,}</td></tr>"
                 f"<tr><td>temp allocator</td><td>{rep['temp_allocator_bytes']:,}</td><td></td></tr>"
                 f"<tr><td>peak</td><td>{rep['peak_bytes']:,}</td><td>op #{rep['peak_index']} {_e(rep['peak_op'])}</td></tr>"
                 "</table>")
    parts.append(_svg(rep))
    v, b = rep.get("verdict"), rep.get("board")
    if v is not None and b is not None:
        cls = "ok" if v["fits"] else "fb"
        word = "fits" if v["fits"] else "does not fit"
        parts.append(f"<p class='{cls}'><b>{word} {_e(b['name'])}</b> ({kib(b['ram_bytes'])} RAM): "
                     + (f"{kib(v['ram_free_bytes'])} RAM free" if v["fits"] else _e("; ".join(v["problems"])))
                     + f"<br><small>{_e(b['source'])}</small></p>")
    for s in rep.get("suggestions", []):
        parts.append(f"<p>suggestion: {_e(s)}</p>")
    return "".join(parts)
