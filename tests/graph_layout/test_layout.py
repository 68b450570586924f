"""backend_core.analyses.graph_layout: clusters, auto-collapse of big graphs (a 5,000-node graph drawn at a
fast size, expanded on demand) and the layout's disk cache."""
from __future__ import annotations

from backend_core.analyses.graph_layout import (GROUP_PREFIX, LayoutOptions, auto_collapse, build_view_graph,
                                                compute_layout, synthetic_snapshot)


def test_big_graph_is_collapsed_to_a_fast_size_and_expands_on_demand(tmp_path) -> None:
    snap = synthetic_snapshot(5000)
    collapsed = auto_collapse(snap)
    assert collapsed
    lay = compute_layout(snap, LayoutOptions(collapsed), cache_dir=tmp_path)
    assert lay.engine == "dot" and not lay.from_cache
    assert len(lay.boxes) <= 400
    groups = [i for i in lay.graph.items.values() if i.is_group]
    assert sum(len(g.members) for g in groups) + len(lay.boxes) - len(groups) == len(snap.nodes)
    assert any(g.fallbacks for g in groups)        # a group with a fallback inside is marked
    again = compute_layout(snap, LayoutOptions(collapsed), cache_dir=tmp_path)
    assert again.from_cache and again.boxes == lay.boxes
    g = groups[0].module_path
    expanded = compute_layout(snap, LayoutOptions(collapsed - {g}), cache_dir=tmp_path)
    assert GROUP_PREFIX + g not in expanded.boxes
    assert g in expanded.clusters and len(expanded.boxes) > len(lay.boxes)


def test_small_graph_is_not_collapsed_and_edges_have_routes(tmp_path) -> None:
    snap = synthetic_snapshot(120, block=40)
    assert auto_collapse(snap) == frozenset()
    lay = compute_layout(snap, LayoutOptions(), cache_dir=tmp_path)
    assert set(lay.boxes) == {n.id for n in snap.nodes}
    assert len(lay.routes) == len({(e.src, e.dst) for e in snap.edges})
    assert all(len(r.points) >= 4 for r in lay.routes)
    vg = build_view_graph(snap, LayoutOptions())
    assert "layers.0" in vg.clusters
    # top to bottom: the input is above the first op
    assert lay.boxes["x"][1] < lay.boxes["op_0"][1]
