"""A stage's graph as the browser draws it: boxes, labels, cluster frames and edge paths, laid out
here by Graphviz (backend_core.analyses.graph_layout, the same view graph and disk cache as the app), so the page
only turns numbers into SVG and opens at once, whatever the graph's size."""
from __future__ import annotations

from typing import Any

from backend_core.analyses.graph_layout import GROUP_PREFIX, Layout, compute_layout
from backend_core.common.snapshot.model import GraphSnapshot


def _r(v: float) -> float:
    return round(v, 1)


def _path(points: list[tuple[float, float]]) -> str:
    """dot's cubic B-spline control points (p0, then c1 c2 p per segment) as an SVG path."""
    if not points:
        return ""
    out = [f"M{_r(points[0][0])} {_r(points[0][1])}"]
    rest = points[1:]
    for k in range(0, len(rest) - len(rest) % 3, 3):
        (a, b), (c, d), (e, f) = rest[k:k + 3]
        out.append(f"C{_r(a)} {_r(b)} {_r(c)} {_r(d)} {_r(e)} {_r(f)}")
    if len(rest) % 3:                          # not a whole segment (the simple layout): straight on
        out.extend(f"L{_r(x)} {_r(y)}" for x, y in rest[len(rest) - len(rest) % 3:])
    return "".join(out)


def _arrow(points: list[tuple[float, float]], tip: tuple[float, float] | None) -> str:
    """The arrow head, a triangle from the spline's end to dot's arrow tip, as SVG polygon points."""
    if tip is None or not points:
        return ""
    (bx, by), (tx, ty) = points[-1], tip
    dx, dy = tx - bx, ty - by
    n = (dx * dx + dy * dy) ** 0.5 or 1.0
    px, py = -dy / n * 3.5, dx / n * 3.5
    return f"{_r(tx)},{_r(ty)} {_r(bx + px)},{_r(by + py)} {_r(bx - px)},{_r(by - py)}"


def graph_data(layout: Layout) -> dict[str, Any]:
    """{w, h, engine, items: [[id, x, y, w, h, kind, lines, members, fallbacks]], edges: [[src, dst, path,
    arrow]], clusters: [[label, x, y, w, h, depth, fallbacks]], node_item: {node: item} for folded nodes}."""
    vg = layout.graph
    items = []
    for iid, it in vg.items.items():
        if iid not in layout.boxes:
            continue
        x, y, w, h = layout.boxes[iid]
        row: list[Any] = [iid, _r(x), _r(y), _r(w), _r(h), it.kind, list(it.lines)]
        if it.is_group:
            row += [list(it.members), it.fallbacks]
        items.append(row)
    edges = []
    for e in layout.routes:
        edges.append([e.src, e.dst, _path(e.points), _arrow(e.points, e.arrow)])
    clusters = []
    for p, (x, y, w, h) in sorted(layout.clusters.items(), key=lambda kv: kv[0].count(".")):
        c = vg.clusters.get(p)
        clusters.append([c.label if c else p, _r(x), _r(y), _r(w), _r(h), p.count("."),
                         c.fallbacks if c else 0])
    node_item = {n: i for n, i in vg.item_of_node.items() if n != i}
    return {"w": _r(layout.width), "h": _r(layout.height), "engine": layout.engine, "note": layout.note,
            "items": items, "edges": edges, "clusters": clusters, "node_item": node_item,
            "collapsed": sorted(i[len(GROUP_PREFIX):] for i in vg.items if i.startswith(GROUP_PREFIX))}


def stage_graph(snap: GraphSnapshot) -> dict[str, Any]:
    """Lay out one stage (auto-collapsed module groups for big graphs, cached on disk)."""
    return graph_data(compute_layout(snap))
