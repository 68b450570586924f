"""Fallback layered layout, so the graph is still shown when dot is missing or fails."""
from __future__ import annotations

from backend_core.analyses.graph_layout.result import EdgeRoute
from backend_core.analyses.graph_layout.view_graph import ViewGraph


def simple_layout(vg: ViewGraph) -> tuple[dict, dict, list[EdgeRoute], float, float]:
    """Layered fallback when dot is unavailable: longest-path ranks, straight edges."""
    preds: dict[str, list[str]] = {i: [] for i in vg.items}
    for e in vg.edges:
        preds[e.dst].append(e.src)
    rank: dict[str, int] = {}
    for i in vg.items:                        # items come in graph (topological) order
        rank[i] = 1 + max((rank.get(p, 0) for p in preds[i]), default=-1)
    rows: dict[int, list[str]] = {}
    for i, r in rank.items():
        rows.setdefault(r, []).append(i)
    boxes = {}
    y = 10.0
    width = 0.0
    for r in sorted(rows):
        x = 10.0
        hmax = 0.0
        for i in rows[r]:
            it = vg.items[i]
            boxes[i] = (x, y, it.width, it.height)
            x += it.width + 20
            hmax = max(hmax, it.height)
        width = max(width, x)
        y += hmax + 40
    routes = []
    for e in vg.edges:
        a, b = boxes[e.src], boxes[e.dst]
        p0 = (a[0] + a[2] / 2, a[1] + a[3])
        p3 = (b[0] + b[2] / 2, b[1] - 6)
        routes.append(EdgeRoute(e.src, e.dst, [p0, p0, p3, p3], (b[0] + b[2] / 2, b[1])))
    return boxes, {}, routes, width, y

