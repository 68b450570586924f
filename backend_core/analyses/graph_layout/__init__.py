"""Graph layout for the viewer: Graphviz `dot -Tjson0` on a *view graph* of a snapshot.

The view graph is what is drawn: snapshot nodes, minus weights/scratch allocs folded into
their consumer (unless `show_weights`), with nn.Module groups that are either clusters
(expanded) or single group boxes (collapsed). Big graphs are collapsed to a module depth that
dot lays out quickly (`auto_collapse`); plain dot takes ~34 s on 5,000 nodes.

Pure Python, no Qt: the app runs `compute_layout` on a worker thread. Results are cached on
disk keyed by `snapshot.content_hash()` + the grouping/collapse state.

This package re-exports the names of the former single module `backend_core.analyses.graph_layout`, so
importers keep using `from backend_core.analyses.graph_layout import ...`.
"""
from backend_core.analyses.graph_layout.cache import LAYOUT_VERSION, layout_cache_dir, layout_key
from backend_core.analyses.graph_layout.compute import compute_layout
from backend_core.analyses.graph_layout.dot import LayoutError, find_dot, parse_dot_json, run_dot, to_dot
from backend_core.analyses.graph_layout.grouping import (AUTO_COLLAPSE_MAX_ITEMS, auto_collapse, aux_nodes, cluster_paths,
                       infer_module_paths, is_aux)
from backend_core.analyses.graph_layout.labels import (CHAR_W, CHAR_W_TITLE, LINE_H, MAX_CHARS, MAX_W, MIN_W, PAD_X, PAD_Y,
                     node_lines, short_op, tensor_text)
from backend_core.analyses.graph_layout.result import EdgeRoute, Layout
from backend_core.analyses.graph_layout.simple import simple_layout
from backend_core.analyses.graph_layout.synthetic import synthetic_snapshot
from backend_core.analyses.graph_layout.view_graph import (GROUP_PREFIX, LayoutOptions, ViewCluster, ViewEdge, ViewGraph,
                         ViewItem, build_view_graph)

__all__ = [
    "AUTO_COLLAPSE_MAX_ITEMS", "CHAR_W", "CHAR_W_TITLE", "GROUP_PREFIX", "LAYOUT_VERSION", "LINE_H",
    "MAX_CHARS", "MAX_W", "MIN_W", "PAD_X", "PAD_Y",
    "EdgeRoute", "Layout", "LayoutError", "LayoutOptions", "ViewCluster", "ViewEdge", "ViewGraph",
    "ViewItem",
    "auto_collapse", "aux_nodes", "build_view_graph", "cluster_paths", "compute_layout", "find_dot",
    "infer_module_paths", "is_aux", "layout_cache_dir", "layout_key", "node_lines",
    "parse_dot_json", "run_dot", "short_op", "simple_layout", "synthetic_snapshot", "tensor_text",
    "to_dot",
]
