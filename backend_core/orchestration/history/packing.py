"""The lowering report a store keeps beside each record, packed: a stage's node that equals the node at
the same id in the stage before is stored as that node's position there, and a stage's edges that equal
the stage before's as a mark. Most passes change few nodes (DS-CNN: 717 of 1,152 nodes over 12 stages
are unchanged), so the JSON to encode and compress halves, and `--record` pays that much less. A node
stored in full leaves out what the report derives from its other fields (`op`, `qparams`:
report.json_report.node_entry), made again when it is read (a quarter less JSON again on DS-CNN).

`unpack_report(pack_report(r)) == r` for every report; a report stored before packing (no mark) is
returned as it was."""
from __future__ import annotations

from typing import Any

PACKED = "history_packed"          # the mark on a packed report: its packing's version (2: derived fields out)
SAME_EDGES = "same as the stage before"
_DERIVED = ("op", "qparams")


def _lean(n: dict[str, Any]) -> dict[str, Any]:
    """The node without the fields node_entry derives, when it derives exactly them (else as it is)."""
    from backend_core.analyses.report.json_report import node_entry

    base = {k: v for k, v in n.items() if k not in _DERIVED}
    return base if node_entry(base) == n else n


def _node_list(st: dict[str, Any]) -> list[Any]:
    nodes = st.get("nodes")
    return nodes if isinstance(nodes, list) else []


def pack_report(report: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy of `report` whose stages refer to the stage before where they are equal."""
    stages = report.get("stages")
    if not isinstance(stages, list) or not stages:
        return report
    # a node without `op` would get one back from unpack_report: then no node is stored lean
    lean = all(isinstance(n, dict) and "op" in n for st in stages if isinstance(st, dict) for n in _node_list(st))
    out: list[Any] = []
    prev_nodes: list[Any] = []
    prev_edges: Any = None
    for st in stages:
        nodes = st.get("nodes") if isinstance(st, dict) else None
        if not isinstance(nodes, list):
            out.append(st)
            prev_nodes, prev_edges = [], None
            continue
        where: dict[Any, int] = {}
        for i, n in enumerate(prev_nodes):
            if isinstance(n, dict):
                where.setdefault(n.get("id"), i)
        packed = []
        for n in nodes:
            j = where.get(n.get("id")) if isinstance(n, dict) else None
            packed.append(j if j is not None and prev_nodes[j] == n else _lean(n) if lean else n)
        st2 = {**st, "nodes": packed}
        edges = st.get("edges")
        if edges is not None and prev_edges is not None and edges == prev_edges:
            st2["edges"] = SAME_EDGES
        out.append(st2)
        prev_nodes, prev_edges = nodes, edges
    return {**report, "stages": out, PACKED: 2 if lean else 1}


def unpack_report(report: dict[str, Any]) -> dict[str, Any]:
    """The report `pack_report` was given (each stage's nodes its own dicts again)."""
    version = report.get(PACKED)
    if not version:
        return report
    from backend_core.analyses.report.json_report import node_entry

    def full_node(n: Any) -> Any:
        return node_entry(n) if version >= 2 and isinstance(n, dict) and "op" not in n else n

    stages: list[Any] = []
    prev_nodes: list[Any] = []
    prev_edges: Any = None
    for st in report["stages"]:
        nodes = st.get("nodes") if isinstance(st, dict) else None
        if not isinstance(nodes, list):
            stages.append(st)
            prev_nodes, prev_edges = [], None
            continue
        full = [dict(prev_nodes[n]) if isinstance(n, int) else full_node(n) for n in nodes]
        edges = st.get("edges")
        if edges == SAME_EDGES:
            edges = [list(e) if isinstance(e, list) else e for e in prev_edges or []]
        st2 = {**st, "nodes": full}
        if "edges" in st:
            st2["edges"] = edges
        stages.append(st2)
        prev_nodes, prev_edges = full, edges
    return {k: v for k, v in report.items() if k != PACKED} | {"stages": stages}
