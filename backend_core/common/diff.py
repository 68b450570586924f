"""What a stage added, removed and rewrote relative to the stage before it.

Nodes are paired by (1) the same name and target, (2) `debug_handle` (set by to_edge, kept by
every Cortex-M pass and inherited by rewritten nodes), (3) `from_node` origin names, (4) the same
name with a new target. Removed q/dq nodes and fused activations leave no record: they are
"removed"; new allocs, pads and placeholders are "added".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import KIND_QUANT, GraphSnapshot, NodeSnapshot


@dataclass(frozen=True)
class StageDiff:
    before: str
    after: str
    added: tuple[str, ...]                     # node ids in `after`
    removed: tuple[str, ...]                   # node ids in `before`
    rewritten: tuple[tuple[str, str], ...]     # (id in before, id in after), target changed
    modified: tuple[str, ...] = ()             # same name and target, arguments changed
    pairs: dict[str, str] = field(default_factory=dict, compare=False)  # after id -> before id

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.rewritten or self.modified)

    def to_dict(self, a: GraphSnapshot, b: GraphSnapshot) -> dict:
        am, bm = a.node_map(), b.node_map()
        return {
            "added": [{"node": i, "op": bm[i].target} for i in self.added],
            "removed": [{"node": i, "op": am[i].target} for i in self.removed],
            "rewritten": [{"from": x, "to": y, "from_op": am[x].target, "to_op": bm[y].target}
                          for x, y in self.rewritten],
            "modified": list(self.modified),
        }


def _role(n: NodeSnapshot) -> str:
    if n.kind == KIND_QUANT:
        return "dq" if op_base_name(n.target).startswith("dequantize") else "q"
    return n.fx_op


def _constant_args(n: NodeSnapshot) -> tuple[str, ...]:
    """Arguments that are not references to other nodes (those get renamed by passes)."""
    return tuple(a for a in n.args if "%" not in a)


def diff_snapshots(a: GraphSnapshot, b: GraphSnapshot) -> StageDiff:
    am, bm = a.node_map(), b.node_map()
    pairs: dict[str, str] = {}
    modified: list[str] = []
    for nid, nb in bm.items():
        na = am.get(nid)
        if na is not None and na.target == nb.target:
            pairs[nid] = nid
            if _constant_args(na) != _constant_args(nb):
                modified.append(nid)
    paired = set(pairs.values())
    free_a = {i: n for i, n in am.items() if i not in paired}
    free_b = [n for i, n in bm.items() if i not in pairs]
    rewritten: list[tuple[str, str]] = []

    def take(nb: NodeSnapshot, na: NodeSnapshot) -> None:
        pairs[nb.id] = na.id
        free_a.pop(na.id, None)
        if na.target != nb.target:
            rewritten.append((na.id, nb.id))

    # (2) debug_handle, same role, preferring the same base op
    by_dh: dict[int, list[NodeSnapshot]] = {}
    for n in free_a.values():
        if n.debug_handle is not None:
            by_dh.setdefault(n.debug_handle, []).append(n)
    for nb in list(free_b):
        if nb.debug_handle is None or nb.id in pairs:
            continue
        cands = [n for n in by_dh.get(nb.debug_handle, []) if n.id in free_a and _role(n) == _role(nb)]
        if cands:
            cands.sort(key=lambda n: op_base_name(n.target) != op_base_name(nb.target))
            take(nb, cands[0])
    # (3) origin names (from_node), (4) same name
    for nb in free_b:
        if nb.id in pairs:
            continue
        for origin in (*nb.origin, nb.id):
            na = free_a.get(origin)
            if na is not None and na.fx_op == nb.fx_op:
                take(nb, na)
                break
    added = tuple(n.id for n in free_b if n.id not in pairs)
    removed = tuple(free_a)
    return StageDiff(a.stage, b.stage, added, removed, tuple(rewritten), tuple(modified), pairs)


_LAST: tuple[list[GraphSnapshot], list[StageDiff | None]] | None = None


def diff_all(snapshots: list[GraphSnapshot]) -> list[StageDiff | None]:
    """diffs[i] compares stage i-1 with stage i (None for the first stage). The last answer is kept (with
    its snapshots, so their ids stay theirs): a report, its compare facts and a history record of one
    lowering each ask for the same stages' diffs. A diff reads only what capture set (ids, targets,
    arguments, debug handles, origins), never the reasons added later."""
    global _LAST
    last = _LAST
    if last is not None and len(last[0]) == len(snapshots) and all(x is y for x, y in zip(last[0], snapshots)):
        return list(last[1])
    out: list[StageDiff | None] = [None]
    for a, b in zip(snapshots, snapshots[1:]):
        out.append(diff_snapshots(a, b))
    _LAST = (list(snapshots), out)
    return list(out)
