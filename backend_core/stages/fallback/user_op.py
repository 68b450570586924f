"""Trace a final-graph node back to the op the user wrote: the node of the "quantized" stage
(the graph the quantizer annotated) it came from, through to_edge's decompositions and the
Cortex-M passes. Evidence used, in order: the node's own from_node origins, the names it had in
earlier stages (provenance pairs), the origins of those earlier nodes, and the debug_handle
that to_edge gives every node one user op decomposed into (FACTS.md "Provenance")."""
from __future__ import annotations

from backend_core.common.provenance import Provenance
from backend_core.common.snapshot.classify import is_quant_boundary
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot, UserOp

QUANTIZED_STAGE = "quantized"
EDGE_STAGE = "edge"
RNN_MODULES = frozenset({"LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"})


def _stage(snapshots: list[GraphSnapshot], name: str) -> GraphSnapshot | None:
    return next((s for s in snapshots if s.stage == name), None)


def _is_user_compute(n: NodeSnapshot | None) -> bool:
    return n is not None and n.fx_op == "call_function" and not is_quant_boundary(n.target)


class UserOpResolver:
    """Maps final-graph node ids to the quantization-time node they came from."""

    def __init__(self, snapshots: list[GraphSnapshot], prov: Provenance) -> None:
        self.snapshots = snapshots
        self.prov = prov
        self.quantized = _stage(snapshots, QUANTIZED_STAGE)
        self.edge = _stage(snapshots, EDGE_STAGE)
        self._by_handle: dict[int, list[NodeSnapshot]] = {}
        if self.edge is not None:
            for n in self.edge.nodes:
                if n.debug_handle is not None:
                    self._by_handle.setdefault(n.debug_handle, []).append(n)

    def quantized_node(self, node: NodeSnapshot) -> NodeSnapshot | None:
        if self.quantized is None:
            return None
        qmap = self.quantized.node_map()
        last = len(self.snapshots) - 1
        candidates: list[str] = [*node.origin, node.id]
        for i, nid in self.prov.history(node.id, last):
            if nid is None or i >= last:
                continue
            candidates.append(nid)
            earlier = self.snapshots[i].node(nid)
            if earlier is not None:
                candidates.extend(earlier.origin)
        if node.debug_handle is not None:
            for n in self._by_handle.get(node.debug_handle, []):
                candidates.extend(n.origin)
        for name in candidates:
            q = qmap.get(name)
            if _is_user_compute(q):
                return q
        return None

    def user_op(self, node: NodeSnapshot) -> UserOp | None:
        q = self.quantized_node(node)
        if q is None:
            return None
        return UserOp(target=q.target, name=q.name,
                      source=q.source.full if q.source else None,
                      module=q.module_path, module_type=q.module_type)


def group_id(user_op: UserOp | None, node: NodeSnapshot) -> str:
    """One id for every node one user op (or one unsupported recurrent module) became."""
    if user_op is None:
        return node.id
    if user_op.module_type in RNN_MODULES and user_op.module:
        return f"module:{user_op.module}"
    return user_op.name
