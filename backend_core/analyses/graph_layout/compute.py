"""The entry point: view graph -> cached layout, else dot, else the simple fallback."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable

from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.analyses.graph_layout.cache import layout_cache_dir, layout_key, load_cached, store_cached
from backend_core.analyses.graph_layout.dot import LayoutError, find_dot, parse_dot_json, run_dot, to_dot
from backend_core.analyses.graph_layout.grouping import auto_collapse
from backend_core.analyses.graph_layout.result import EdgeRoute, Layout
from backend_core.analyses.graph_layout.simple import simple_layout
from backend_core.analyses.graph_layout.view_graph import LayoutOptions, build_view_graph


def compute_layout(snap: GraphSnapshot, opts: LayoutOptions | None = None, *,
                   use_cache: bool = True, cache_dir: Path | None = None,
                   register: Callable[[subprocess.Popen | None], None] | None = None) -> Layout:
    """Lay out `snap` (auto-collapsed when `opts` is None). Blocking: call off the UI thread."""
    t0 = time.perf_counter()
    if opts is None:
        opts = LayoutOptions(collapsed=auto_collapse(snap))
    vg = build_view_graph(snap, opts)
    src = to_dot(vg)
    try:
        exe = find_dot()
    except LayoutError:
        exe = ""
    path = (cache_dir or layout_cache_dir()) / f"{layout_key(src, exe)}.json"
    cached = load_cached(path) if use_cache and exe else None
    if cached is not None:
        boxes = {k: tuple(v) for k, v in cached["boxes"].items()}
        if set(boxes) == set(vg.items):
            return Layout(vg, boxes, {k: tuple(v) for k, v in cached["clusters"].items()},
                          [EdgeRoute(r[0], r[1], [tuple(p) for p in r[2]],
                                     tuple(r[3]) if r[3] else None) for r in cached["routes"]],
                          cached["width"], cached["height"], opts,
                          time.perf_counter() - t0, True, cached.get("engine", "dot"))
    engine, note = "dot", ""
    try:
        boxes, clusters, routes, w, h = parse_dot_json(run_dot(src, register=register), vg)
        if set(boxes) != set(vg.items):
            raise LayoutError("dot returned an incomplete layout")
    except LayoutError as e:                  # still show the graph, and say why it looks plain
        engine, note = "simple", f"{e} {e.hint}".strip()
        boxes, clusters, routes, w, h = simple_layout(vg)
    if use_cache and engine == "dot":
        store_cached(path, {"boxes": boxes, "clusters": clusters, "width": w, "height": h, "engine": engine,
                      "routes": [[r.src, r.dst, r.points, r.arrow] for r in routes]})
    return Layout(vg, boxes, clusters, routes, w, h, opts, time.perf_counter() - t0, False, engine,
                  note)
