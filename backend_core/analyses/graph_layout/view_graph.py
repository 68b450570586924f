"""The view graph: what is drawn for a snapshot under given grouping/collapse options.

Snapshot nodes minus aux nodes folded into their consumer (unless `show_weights`), collapsed
module groups as single boxes, expanded ones as clusters. Both dot and the fallback layout
consume this, and the app keeps it to map items back to snapshot nodes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from backend_core.common.snapshot.model import KIND_FALLBACK, GraphSnapshot, NodeSnapshot
from backend_core.analyses.graph_layout.grouping import aux_nodes, cluster_paths, first_in, is_aux, node_paths
from backend_core.analyses.graph_layout.labels import MAX_CHARS, box_size, clip, node_lines

GROUP_PREFIX = "group:"


@dataclass(frozen=True)
class LayoutOptions:
    collapsed: frozenset[str] = frozenset()   # module paths drawn as one group box
    show_weights: bool = False                # draw weights / scratch allocs as nodes

    def key(self) -> str:
        return json.dumps([sorted(self.collapsed), self.show_weights])


@dataclass
class ViewItem:
    """One box on the canvas: a snapshot node or a collapsed module group."""

    id: str                                   # node id, or "group:<module path>"
    is_group: bool
    module_path: str
    lines: list[str]
    width: float
    height: float
    kind: str = ""
    members: tuple[str, ...] = ()             # group: node ids inside
    aux: tuple[str, ...] = ()                 # node: folded weight / alloc node ids
    fallbacks: int = 0                        # group: fallback nodes inside
    beside: str = ""                          # shown weight/alloc: the item it feeds (same row)


@dataclass
class ViewEdge:
    src: str                                  # item ids
    dst: str
    edges: tuple[int, ...]                    # indices into snapshot.edges


@dataclass
class ViewCluster:
    path: str
    label: str
    items: tuple[str, ...]                    # item ids directly or transitively inside
    depth: int
    fallbacks: int = 0


@dataclass
class ViewGraph:
    items: dict[str, ViewItem]
    edges: list[ViewEdge]
    clusters: dict[str, ViewCluster]          # expanded groups, by module path
    item_of_node: dict[str, str]              # snapshot node id -> item id (hidden aux -> consumer)



def build_view_graph(snap: GraphSnapshot, opts: LayoutOptions) -> ViewGraph:
    visible, path, folded = node_paths(snap, opts.show_weights)
    nm = snap.node_map()
    collapsed_set = opts.collapsed
    items: dict[str, ViewItem] = {}
    item_of_node: dict[str, str] = {}
    group_members: dict[str, list[NodeSnapshot]] = {}
    for n in visible:
        p = path[n.id]
        g = first_in(p, collapsed_set)
        if g is not None:
            group_members.setdefault(g, []).append(n)
            item_of_node[n.id] = GROUP_PREFIX + g
            continue
        aux = folded.get(n.id, [])
        lines = node_lines(n, aux)
        w, h = box_size(lines)
        items[n.id] = ViewItem(n.id, False, p, lines, w, h, kind=n.kind,
                               aux=tuple(a.id for a in aux))
        item_of_node[n.id] = n.id
    for g, mem in group_members.items():
        fb = sum(1 for m in mem if m.kind == KIND_FALLBACK)
        mtype = next((m.module_type for m in mem if m.module_path == g and m.module_type), "")
        lines = ["▸ " + clip(g, MAX_CHARS - 2), clip(f"{mtype + ' · ' if mtype else ''}{len(mem)} nodes")]
        if fb:
            lines.append(f"⚠ {fb} fallback{'s' if fb > 1 else ''}")
        w, h = box_size(lines, 130.0)
        gid = GROUP_PREFIX + g
        items[gid] = ViewItem(gid, True, g, lines, w, h, kind="group",
                              members=tuple(m.id for m in mem), fallbacks=fb)
    for n_id, aux in folded.items():          # hidden aux nodes map to (one of) their consumers
        for a in aux:
            item_of_node.setdefault(a.id, item_of_node.get(n_id, n_id))
    edges: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(snap.edges):
        s, d = item_of_node.get(e.src), item_of_node.get(e.dst)
        if s is None or d is None or s == d or s not in items or d not in items:
            continue
        if not opts.show_weights and nm.get(e.src) is not None and is_aux(nm[e.src]):
            continue
        edges.setdefault((s, d), []).append(i)
    if opts.show_weights:                     # weights sit on their consumer's row
        aux_ids = aux_nodes(snap)
        for (s_id, d_id), _ in edges.items():
            it = items[s_id]
            if s_id in aux_ids and not it.is_group and not it.beside and not items[d_id].is_group:
                it.beside = d_id
    # clusters over the visible items (a collapsed group sits in its parent's cluster)
    ids = list(items)
    groups = cluster_paths(items[i].module_path if not items[i].is_group
                           else items[i].module_path.rsplit(".", 1)[0] if "." in items[i].module_path
                           else "" for i in ids)
    clusters: dict[str, ViewCluster] = {}
    for g, positions in groups.items():
        mem_ids = tuple(ids[int(k)] for k in positions)
        mtype = next((nm[i].module_type for i in mem_ids if i in nm and nm[i].module_path == g
                      and nm[i].module_type), "")
        fb = sum(items[i].fallbacks if items[i].is_group else int(items[i].kind == KIND_FALLBACK)
                 for i in mem_ids)
        clusters[g] = ViewCluster(g, f"{g}" + (f"  ({mtype})" if mtype else ""), mem_ids,
                                  g.count("."), fb)
    return ViewGraph(items, [ViewEdge(s, d, tuple(ix)) for (s, d), ix in edges.items()],
                     clusters, item_of_node)

