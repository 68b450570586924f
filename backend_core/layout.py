"""Graph layout for the viewer: Graphviz `dot -Tjson0` on a *view graph* of a snapshot.

The view graph is what is drawn: snapshot nodes, minus weights/scratch allocs folded into
their consumer (unless `show_weights`), with nn.Module groups that are either clusters
(expanded) or single group boxes (collapsed). Big graphs are collapsed to a module depth that
dot lays out quickly (`auto_collapse`); plain dot takes ~34 s on 5,000 nodes.

Pure Python, no Qt: the app runs `compute_layout` on a worker thread. Results are cached on
disk keyed by `snapshot.content_hash()` + the grouping/collapse state.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from .snapshot.classify import op_base_name
from .snapshot.model import (KIND_FALLBACK, KIND_INPUT, KIND_PLUMBING, KIND_QUANT, KIND_WEIGHT,
                             GraphSnapshot, NodeSnapshot)

LAYOUT_VERSION = "7"
CHAR_W_TITLE = 7.0    # average glyph width (points) of the first label line (11 px bold)
CHAR_W = 5.8          # ... of the other lines (10 px)
LINE_H = 14.0         # line height (points) of node labels
PAD_X = 14.0
PAD_Y = 8.0
MIN_W, MAX_W = 96.0, 300.0
MAX_CHARS = int((MAX_W - 2 * PAD_X) / CHAR_W_TITLE)
AUTO_COLLAPSE_MAX_ITEMS = 400
GROUP_PREFIX = "group:"


class LayoutError(RuntimeError):
    """dot is missing or failed; `hint` says how to fix it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


# --------------------------------------------------------------------------- view graph
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


def short_op(n: NodeSnapshot) -> str:
    """`cortex_m.quantized_conv2d.default` -> `cortex_m.quantized_conv2d`; placeholders by name."""
    if n.fx_op in ("placeholder", "get_attr", "output"):
        return n.name
    parts = n.target.split(".")
    if len(parts) >= 3 and parts[-1] in ("default", "Tensor", "Scalar", "out", "int", "dim", "self",
                                         "input", "Tensor_mode", "Scalar_mode", "using_ints"):
        parts = parts[:-1]
    if parts and parts[0] == "quantized_decomposed":
        parts[0] = "qd"                       # the PT2E q/dq namespace, shortened to fit
    return ".".join(parts)


def tensor_text(dtype: str | None, shape: Iterable[int] | None) -> str:
    s = "" if shape is None else "[" + ",".join(str(d) for d in shape) + "]"
    return f"{dtype or '?'}{s}" if (dtype or s) else ""


def _clip(text: str, n: int = MAX_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def node_lines(n: NodeSnapshot, aux: list[NodeSnapshot]) -> list[str]:
    lines = [_clip(short_op(n))]
    t = tensor_text(n.dtype, n.shape)
    if t:
        lines.append(_clip(t))
    if aux:
        parts = [tensor_text(a.dtype, a.shape) if a.kind == KIND_WEIGHT else "scratch" for a in aux]
        lines.append(_clip("+ " + ", ".join(parts)))
    return lines


def _box(lines: list[str], min_w: float = MIN_W) -> tuple[float, float]:
    w = max(len(s) * (CHAR_W_TITLE if i == 0 else CHAR_W) for i, s in enumerate(lines)) + 2 * PAD_X
    return max(min_w, min(MAX_W, w)), len(lines) * LINE_H + 2 * PAD_Y


def is_aux(n: NodeSnapshot) -> bool:
    """Weights, constants and scratch allocs: folded into their consumer unless shown."""
    if n.kind == KIND_WEIGHT:
        return True
    return n.kind == KIND_PLUMBING and not n.inputs and n.fx_op == "call_function"


def _prefixes(path: str) -> list[str]:
    if not path:
        return []
    parts = path.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def _first_in(path: str, chosen: set[str] | frozenset[str]) -> str | None:
    """The shortest prefix of `path` that is in `chosen`."""
    for pre in _prefixes(path):
        if pre in chosen:
            return pre
    return None


def _consumers(snap: GraphSnapshot) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in snap.edges:
        out.setdefault(e.src, []).append(e.dst)
    return out


def aux_nodes(snap: GraphSnapshot) -> set[str]:
    """Ids of weights, scratch allocs and the dequantize nodes that only read weights."""
    out: set[str] = set()
    for n in snap.nodes:                      # graph order: producers come first
        if is_aux(n) or (n.kind == KIND_QUANT and n.inputs and all(i in out for i in n.inputs)):
            out.add(n.id)
    return out


def infer_module_paths(snap: GraphSnapshot) -> dict[str, str]:
    """Module path of every node; q/dq and weights get one from their neighbours: a quantize
    belongs to its producer's module, anything else to its consumers' (when they agree)."""
    nm = snap.node_map()
    cons = _consumers(snap)
    path = {n.id: n.module_path for n in snap.nodes}

    def from_users(nid: str) -> str:
        ups = {path[u] for u in cons.get(nid, ()) if path.get(u)}
        return ups.pop() if len(ups) == 1 else ""

    def from_producers(n: NodeSnapshot) -> str:
        ups = {path[i] for i in n.inputs if path.get(i) and nm[i].kind != KIND_WEIGHT}
        return ups.pop() if len(ups) == 1 else ""

    for n in snap.nodes:                      # forwards: quantize <- producer
        if not path[n.id] and n.kind == KIND_QUANT and not op_base_name(n.target).startswith("de"):
            path[n.id] = from_producers(n)
    for n in reversed(snap.nodes):            # backwards: dequantize, weights, allocs <- users
        if not path[n.id] and n.kind not in (KIND_INPUT,) and n.fx_op != "output":
            path[n.id] = from_users(n.id)
    return path


def _node_paths(snap: GraphSnapshot, show_weights: bool) -> tuple[list[NodeSnapshot], dict[str, str], dict[str, list[NodeSnapshot]]]:
    """Visible nodes, their module paths, and the aux nodes folded into each consumer."""
    nm = snap.node_map()
    cons = _consumers(snap)
    aux = aux_nodes(snap)
    path = infer_module_paths(snap)
    visible: list[NodeSnapshot] = []
    folded: dict[str, list[NodeSnapshot]] = {}
    if not show_weights:
        for n in snap.nodes:
            if n.id in aux:
                continue
            # the weights behind each input: direct, or through a weight-only dequantize
            seen: list[NodeSnapshot] = []
            for i in n.inputs:
                if i not in aux:
                    continue
                a = nm[i]
                if a.kind == KIND_QUANT and a.inputs and a.inputs[0] in nm:
                    a = nm[a.inputs[0]]
                seen.append(a)
            if seen:
                folded[n.id] = seen
    for n in snap.nodes:
        if n.id in aux and (not show_weights or not cons.get(n.id)):
            continue
        visible.append(n)
    return visible, path, folded


def cluster_paths(paths: Iterable[str]) -> dict[str, list[str]]:
    """Module paths worth a box: >= 2 members, and not the same member set as a parent's."""
    members: dict[str, list[str]] = {}
    for i, p in enumerate(paths):
        for pre in _prefixes(p):
            members.setdefault(pre, []).append(str(i))
    out: dict[str, list[str]] = {}
    for pre in sorted(members, key=lambda s: s.count(".")):
        m = members[pre]
        if len(m) < 2:
            continue
        parent = pre.rsplit(".", 1)[0] if "." in pre else None
        # drop a group whose members equal its nearest kept ancestor's (a chain of wrappers)
        anc = parent
        while anc is not None and anc not in out:
            anc = anc.rsplit(".", 1)[0] if "." in anc else None
        if anc is not None and len(out[anc]) == len(m):
            continue
        out[pre] = m
    return out


def auto_collapse(snap: GraphSnapshot, show_weights: bool = False,
                  max_items: int = AUTO_COLLAPSE_MAX_ITEMS) -> frozenset[str]:
    """Collapse module groups at the deepest module depth that keeps <= max_items boxes."""
    visible, path, _ = _node_paths(snap, show_weights)
    if len(visible) <= max_items:
        return frozenset()
    paths = [path[n.id] for n in visible]
    groups = cluster_paths(paths)
    if not groups:
        return frozenset()
    max_depth = max(g.count(".") for g in groups)
    # deepest group depth (<= d) below each group, to find the frontier at depth d
    below: dict[str, list[int]] = {g: [] for g in groups}
    for g in groups:
        for pre in _prefixes(g)[:-1]:
            if pre in below:
                below[pre].append(g.count("."))
    best: frozenset[str] | None = None
    for depth in range(0, max_depth + 1):
        # collapse the deepest group within the depth budget on every branch
        chosen = {g for g in groups if g.count(".") <= depth and not any(x <= depth for x in below[g])}
        count = len(chosen) + sum(1 for p in paths if _first_in(p, chosen) is None)
        if count <= max_items or best is None:
            best = frozenset(chosen)
        if count > max_items:
            break
    return best or frozenset()


def build_view_graph(snap: GraphSnapshot, opts: LayoutOptions) -> ViewGraph:
    visible, path, folded = _node_paths(snap, opts.show_weights)
    nm = snap.node_map()
    collapsed_set = opts.collapsed
    items: dict[str, ViewItem] = {}
    item_of_node: dict[str, str] = {}
    group_members: dict[str, list[NodeSnapshot]] = {}
    for n in visible:
        p = path[n.id]
        g = _first_in(p, collapsed_set)
        if g is not None:
            group_members.setdefault(g, []).append(n)
            item_of_node[n.id] = GROUP_PREFIX + g
            continue
        aux = folded.get(n.id, [])
        lines = node_lines(n, aux)
        w, h = _box(lines)
        items[n.id] = ViewItem(n.id, False, p, lines, w, h, kind=n.kind,
                               aux=tuple(a.id for a in aux))
        item_of_node[n.id] = n.id
    for g, mem in group_members.items():
        fb = sum(1 for m in mem if m.kind == KIND_FALLBACK)
        mtype = next((m.module_type for m in mem if m.module_path == g and m.module_type), "")
        lines = ["▸ " + _clip(g, MAX_CHARS - 2), _clip(f"{mtype + ' · ' if mtype else ''}{len(mem)} nodes")]
        if fb:
            lines.append(f"⚠ {fb} fallback{'s' if fb > 1 else ''}")
        w, h = _box(lines, 130.0)
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
        aux = aux_nodes(snap)
        for (s_id, d_id), _ in edges.items():
            it = items[s_id]
            if s_id in aux and not it.is_group and not it.beside and not items[d_id].is_group:
                it.beside = d_id
    # clusters over the visible items (a collapsed group sits in its parent's cluster)
    ids = list(items)
    groups = cluster_paths(items[i].module_path if not items[i].is_group
                           else items[i].module_path.rsplit(".", 1)[0] if "." in items[i].module_path
                           else "" for i in ids)
    clusters: dict[str, ViewCluster] = {}
    for g, mem in groups.items():
        mem_ids = tuple(ids[int(k)] for k in mem)
        mtype = next((nm[i].module_type for i in mem_ids if i in nm and nm[i].module_path == g
                      and nm[i].module_type), "")
        fb = sum(items[i].fallbacks if items[i].is_group else int(items[i].kind == KIND_FALLBACK)
                 for i in mem_ids)
        clusters[g] = ViewCluster(g, f"{g}" + (f"  ({mtype})" if mtype else ""), mem_ids,
                                  g.count("."), fb)
    return ViewGraph(items, [ViewEdge(s, d, tuple(ix)) for (s, d), ix in edges.items()],
                     clusters, item_of_node)


# --------------------------------------------------------------------------- layout result
@dataclass
class EdgeRoute:
    src: str
    dst: str
    points: list[tuple[float, float]]         # cubic Bezier: p0, (c1, c2, p)*; scene coords
    arrow: tuple[float, float] | None = None  # arrow tip (the spline ends short of it)


@dataclass
class Layout:
    graph: ViewGraph
    boxes: dict[str, tuple[float, float, float, float]]          # item id -> x, y, w, h (top-left)
    clusters: dict[str, tuple[float, float, float, float]]       # module path -> x, y, w, h
    routes: list[EdgeRoute]
    width: float
    height: float
    options: LayoutOptions = field(default_factory=LayoutOptions)
    seconds: float = 0.0
    from_cache: bool = False
    engine: str = "dot"
    note: str = ""                            # why the simple fallback layout was used


# --------------------------------------------------------------------------- dot
def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(vg: ViewGraph) -> str:
    """The dot source. Nodes are fixed-size boxes (the app draws the labels itself)."""
    big = len(vg.items) > 150
    out = ["digraph G {",
           "rankdir=TB; nodesep=0.22; ranksep=0.42; newrank=true; outputorder=edgesfirst;",
           f"{'mclimit=0.3;' if big else ''}",
           'node [shape=box fixedsize=true label="" margin=0];',
           'edge [arrowsize=0.6];']
    # nest clusters by path
    children: dict[str, list[str]] = {"": []}
    for p in sorted(vg.clusters, key=lambda s: (s.count("."), s)):
        parent = ""
        for pre in reversed(_prefixes(p)[:-1]):
            if pre in vg.clusters:
                parent = pre
                break
        children.setdefault(parent, []).append(p)
        children.setdefault(p, [])
    direct: dict[str, list[str]] = {"": []}
    owner: dict[str, str] = {}
    for c in sorted(vg.clusters, key=lambda s: s.count(".")):
        for i in vg.clusters[c].items:
            owner[i] = c                      # deepest cluster wins (sorted shallow -> deep)
    for i in vg.items:
        direct.setdefault(owner.get(i, ""), []).append(i)

    beside: dict[str, list[str]] = {}
    for i, it in vg.items.items():
        if it.beside and owner.get(i, "") == owner.get(it.beside, ""):
            beside.setdefault(it.beside, []).append(i)

    def emit(c: str, indent: str) -> None:
        for i in direct.get(c, []):
            it = vg.items[i]
            out.append(f"{indent}{_q(i)} [width={it.width / 72:.3f} height={it.height / 72:.3f}];")
            if i in beside:                   # weights and scratch on the row of their user
                out.append(f"{indent}{{rank=same; {_q(i)}; {'; '.join(_q(w) for w in beside[i])};}}")
        for k, sub in enumerate(children.get(c, [])):
            cid = hashlib.sha1(sub.encode()).hexdigest()[:12]
            out.append(f"{indent}subgraph {_q('cluster_' + cid)} {{")
            out.append(f'{indent}  id={_q(sub)}; label={_q(vg.clusters[sub].label)}; '
                       'fontsize=10; fontname="Helvetica"; margin=10; labeljust=l;')
            emit(sub, indent + "  ")
            out.append(f"{indent}}}")

    emit("", "")
    for e in vg.edges:
        out.append(f"{_q(e.src)} -> {_q(e.dst)};")
    out.append("}")
    return "\n".join(out)


def find_dot() -> str:
    exe = shutil.which("dot") or ("/usr/bin/dot" if Path("/usr/bin/dot").exists() else None)
    if not exe:
        raise LayoutError("Graphviz `dot` was not found.",
                          "Install Graphviz: sudo apt-get install graphviz (or brew install graphviz).")
    return exe


def run_dot(src: str, *, timeout: float = 120.0,
            register: Callable[[subprocess.Popen | None], None] | None = None) -> dict:
    """Run `dot -Tjson0` on `src`; `register(proc)` lets a caller kill it (then None)."""
    proc = subprocess.Popen([find_dot(), "-Tjson0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if register:
        register(proc)
    try:
        out, err = proc.communicate(src, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise LayoutError(f"dot did not finish within {timeout:.0f} s.",
                          "Collapse more module groups.") from None
    finally:
        if register:
            register(None)
    if proc.returncode != 0:
        raise LayoutError(f"dot failed (exit {proc.returncode}): {err.strip()[:500]}")
    return json.loads(out)


def _pt(s: str, h: float) -> tuple[float, float]:
    x, y = s.split(",")[:2]
    return float(x), h - float(y)


def parse_dot_json(data: dict, vg: ViewGraph) -> tuple[dict, dict, list[EdgeRoute], float, float]:
    x0, y0, x1, y1 = (float(v) for v in data["bb"].split(","))
    h = y1
    boxes: dict[str, tuple[float, float, float, float]] = {}
    clusters: dict[str, tuple[float, float, float, float]] = {}
    gvid_name: dict[int, str] = {}
    for o in data.get("objects", []):
        if "nodes" in o or o.get("name", "").startswith("cluster_"):
            if "bb" in o and o.get("id") in vg.clusters:
                a, b, c, d = (float(v) for v in o["bb"].split(","))
                clusters[o["id"]] = (a, h - d, c - a, d - b)
            continue
        name = o["name"]
        gvid_name[o["_gvid"]] = name
        if name in vg.items and "pos" in o:
            cx, cy = _pt(o["pos"], h)
            it = vg.items[name]
            boxes[name] = (cx - it.width / 2, cy - it.height / 2, it.width, it.height)
    routes: list[EdgeRoute] = []
    for e in data.get("edges", []):
        src, dst = gvid_name.get(e["tail"]), gvid_name.get(e["head"])
        if src is None or dst is None or "pos" not in e:
            continue
        arrow = None
        pts: list[tuple[float, float]] = []
        for tok in e["pos"].split():
            if tok.startswith("e,"):
                arrow = _pt(tok[2:], h)
            elif tok.startswith("s,"):
                continue
            else:
                pts.append(_pt(tok, h))
        routes.append(EdgeRoute(src, dst, pts, arrow))
    return boxes, clusters, routes, x1 - x0, y1 - y0


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


# --------------------------------------------------------------------------- cache + entry
def layout_cache_dir() -> Path:
    from .cache import cache_root

    return cache_root() / "layout"


def layout_key(snap: GraphSnapshot, opts: LayoutOptions) -> str:
    blob = f"{LAYOUT_VERSION}|{snap.content_hash()}|{opts.key()}"
    return hashlib.sha1(blob.encode()).hexdigest()


def _load_cached(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def _store(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        pass                                  # a cache that cannot be written is only slower


def compute_layout(snap: GraphSnapshot, opts: LayoutOptions | None = None, *,
                   use_cache: bool = True, cache_dir: Path | None = None,
                   register: Callable[[subprocess.Popen | None], None] | None = None) -> Layout:
    """Lay out `snap` (auto-collapsed when `opts` is None). Blocking: call off the UI thread."""
    t0 = time.perf_counter()
    if opts is None:
        opts = LayoutOptions(collapsed=auto_collapse(snap))
    vg = build_view_graph(snap, opts)
    path = (cache_dir or layout_cache_dir()) / f"{layout_key(snap, opts)}.json"
    cached = _load_cached(path) if use_cache else None
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
        boxes, clusters, routes, w, h = parse_dot_json(run_dot(to_dot(vg), register=register), vg)
        if set(boxes) != set(vg.items):
            raise LayoutError("dot returned an incomplete layout")
    except LayoutError as e:                  # still show the graph, and say why it looks plain
        engine, note = "simple", f"{e} {e.hint}".strip()
        boxes, clusters, routes, w, h = simple_layout(vg)
    if use_cache and engine == "dot":
        _store(path, {"boxes": boxes, "clusters": clusters, "width": w, "height": h, "engine": engine,
                      "routes": [[r.src, r.dst, r.points, r.arrow] for r in routes]})
    return Layout(vg, boxes, clusters, routes, w, h, opts, time.perf_counter() - t0, False, engine,
                  note)


# --------------------------------------------------------------------------- synthetic graphs
def synthetic_snapshot(n_nodes: int = 5000, block: int = 50) -> GraphSnapshot:
    """A transformer-like chain of residual blocks, `block` nodes each, for benchmarks/tests."""
    from .snapshot.model import KIND_CMSIS, KIND_INPUT, EdgeSnapshot

    nodes: list[NodeSnapshot] = [NodeSnapshot("x", "x", "placeholder", "x", KIND_INPUT, "float32", (1, 64))]
    edges: list[EdgeSnapshot] = []
    prev = "x"
    i = 0
    b = 0
    while len(nodes) < n_nodes:
        block_in = prev
        for k in range(block):
            if len(nodes) >= n_nodes:
                break
            sub = ("attn", "mlp")[k * 2 // block]
            path = f"layers.{b}.{sub}.{k % 5}"
            nid = f"op_{i}"
            kind = KIND_FALLBACK if i % 997 == 500 else KIND_CMSIS
            target = "aten.mul.Tensor" if kind == KIND_FALLBACK else "cortex_m.quantized_linear.default"
            ins = (prev,) if k % 7 else (prev, block_in)
            nodes.append(NodeSnapshot(nid, nid, "call_function", target, kind, "int8", (1, 64),
                                      inputs=ins, module_path=path, module_type="Linear"))
            for j, s in enumerate(ins):
                edges.append(EdgeSnapshot(s, nid, j, "int8", (1, 64)))
            prev = nid
            i += 1
        b += 1
    return GraphSnapshot("synthetic", 0, "final", tuple(nodes), tuple(edges))
