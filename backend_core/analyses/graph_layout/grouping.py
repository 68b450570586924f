"""Module-group structure of a snapshot: which nodes are folded aux nodes, which module path
each node belongs to, which module paths deserve a box, and how deep to collapse big graphs.

Kept apart from the view graph so `auto_collapse` can pick a collapse set without building one.
"""
from __future__ import annotations

from typing import Iterable

from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import (KIND_INPUT, KIND_PLUMBING, KIND_QUANT, KIND_WEIGHT, GraphSnapshot,
                              NodeSnapshot)

AUTO_COLLAPSE_MAX_ITEMS = 400


def is_aux(n: NodeSnapshot) -> bool:
    """Weights, constants and scratch allocs: folded into their consumer unless shown."""
    if n.kind == KIND_WEIGHT:
        return True
    return n.kind == KIND_PLUMBING and not n.inputs and n.fx_op == "call_function"


def path_prefixes(path: str) -> list[str]:
    if not path:
        return []
    parts = path.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


def first_in(path: str, chosen: set[str] | frozenset[str]) -> str | None:
    """The shortest prefix of `path` that is in `chosen`."""
    for pre in path_prefixes(path):
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


def node_paths(snap: GraphSnapshot,
               show_weights: bool) -> tuple[list[NodeSnapshot], dict[str, str], dict[str, list[NodeSnapshot]]]:
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
        for pre in path_prefixes(p):
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
    visible, path, _ = node_paths(snap, show_weights)
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
        for pre in path_prefixes(g)[:-1]:
            if pre in below:
                below[pre].append(g.count("."))
    best: frozenset[str] | None = None
    for depth in range(0, max_depth + 1):
        # collapse the deepest group within the depth budget on every branch
        chosen = {g for g in groups if g.count(".") <= depth and not any(x <= depth for x in below[g])}
        count = len(chosen) + sum(1 for p in paths if first_in(p, chosen) is None)
        if count <= max_items or best is None:
            best = frozenset(chosen)
        if count > max_items:
            break
    return best or frozenset()

