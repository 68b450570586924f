"""Fallback islands: the part of the final graph a fallback drags along.

A float fallback (LayerNorm) runs between a `cortex_m.dequantize_per_tensor` and a
`cortex_m.quantize_per_tensor`: its cost is not only the portable kernel but the dequantize, the other
float ops and the quantize back. An island is a connected set of op nodes joined by float tensors
(edges whose tensor is floating point, between call_function nodes) that contains at least one
portable fallback; an int8 fallback (a clamp that could not be fused, a ceil-mode max pool) has no
float edges and is an island of one. The graph's own input quantize and output dequantize touch a
placeholder / the output, not another op, so they join no island unless a fallback sits next to them.

The island's neighbours are the nearest CMSIS-NN kernels before and after it (through other islands
and data movement): "the LayerNorm island costs 2.1x the instructions of the linears around it"."""
from __future__ import annotations

from dataclasses import dataclass, field

from backend_core.common.snapshot.model import KIND_CMSIS, KIND_FALLBACK, GraphSnapshot

_FLOAT = ("float", "bfloat")


@dataclass
class IslandShape:
    """An island's nodes (graph order), its fallbacks and its neighbouring CMSIS-NN kernels."""

    nodes: list[str]
    fallbacks: list[str]
    before: list[str] = field(default_factory=list)     # nearest CMSIS-NN producers
    after: list[str] = field(default_factory=list)      # nearest CMSIS-NN consumers

    @property
    def neighbours(self) -> list[str]:
        return self.before + [n for n in self.after if n not in self.before]


def _is_float(dtype: str | None) -> bool:
    return dtype is not None and dtype.replace("torch.", "").startswith(_FLOAT)


def find_islands(final: GraphSnapshot) -> list[IslandShape]:
    """Every fallback island of the final graph, in graph order."""
    nodes = final.node_map()
    order = {n.id: i for i, n in enumerate(final.nodes)}
    ops = {n.id for n in final.nodes if n.fx_op == "call_function" and n.target != "memory.alloc"}
    parent = {n: n for n in ops}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in final.edges:
        if e.src in ops and e.dst in ops and _is_float(e.dtype or nodes[e.src].dtype):
            ra, rb = find(e.src), find(e.dst)
            if ra != rb:
                parent[ra] = rb
    groups: dict[str, list[str]] = {}
    for n in ops:
        groups.setdefault(find(n), []).append(n)
    islands = []
    for members in groups.values():
        fallbacks = [m for m in members if nodes[m].kind == KIND_FALLBACK]
        if not fallbacks:
            continue
        members.sort(key=order.__getitem__)
        fallbacks.sort(key=order.__getitem__)
        isl = IslandShape(members, fallbacks)
        isl.before = _nearest_cmsis(final, members, upstream=True)
        isl.after = _nearest_cmsis(final, members, upstream=False)
        islands.append(isl)
    islands.sort(key=lambda i: order[i.nodes[0]])
    return islands


def _nearest_cmsis(final: GraphSnapshot, members: list[str], upstream: bool) -> list[str]:
    """Breadth-first from the island, across non-CMSIS op nodes, to the first CMSIS-NN kernels."""
    nodes = final.node_map()
    consumers: dict[str, list[str]] = {}
    for e in final.edges:
        consumers.setdefault(e.src, []).append(e.dst)
    inside = set(members)
    frontier = list(members)
    seen = set(members)
    found: list[str] = []
    while frontier:
        nxt: list[str] = []
        for nid in frontier:
            for other in (nodes[nid].inputs if upstream else consumers.get(nid, [])):
                n = nodes.get(other)
                if other in seen or n is None or n.fx_op != "call_function" or n.target == "memory.alloc":
                    continue
                seen.add(other)
                if n.kind == KIND_CMSIS and other not in inside:
                    found.append(other)
                else:
                    nxt.append(other)
        frontier = nxt
    order = {n.id: i for i, n in enumerate(final.nodes)}
    return sorted(set(found), key=order.__getitem__)
