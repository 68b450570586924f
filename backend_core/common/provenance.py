"""Follow a node across stages, so a selection survives stepping through passes and every
lowered kernel can be traced back to the float model's op."""
from __future__ import annotations

from backend_core.common.diff import StageDiff, diff_all
from backend_core.common.snapshot.model import GraphSnapshot


class Provenance:
    """Pairings between consecutive stages, walked forwards or backwards."""

    def __init__(self, snapshots: list[GraphSnapshot], diffs: list[StageDiff | None] | None = None) -> None:
        self.snapshots = snapshots
        self.diffs = diffs if diffs is not None else diff_all(snapshots)
        self._back: list[dict[str, str]] = [d.pairs if d else {} for d in self.diffs]
        self._fwd: list[dict[str, str]] = [{v: k for k, v in m.items()} for m in self._back]

    def step(self, node_id: str, frm: int, to: int) -> str | None:
        """The node in stage `to` that `node_id` of stage `frm` became (or came from)."""
        cur: str | None = node_id
        i = frm
        while cur is not None and i != to:
            if to > i:
                cur = self._fwd[i + 1].get(cur)
                i += 1
            else:
                cur = self._back[i].get(cur)
                i -= 1
        return cur

    def nearest(self, node_id: str, frm: int, to: int) -> str | None:
        """Like step(), but if the node vanished on the way (e.g. a fused relu), return the last
        node it was seen as, re-mapped by debug_handle in the target stage when possible."""
        exact = self.step(node_id, frm, to)
        if exact is not None:
            return exact
        src = self.snapshots[frm].node(node_id)
        if src is None or src.debug_handle is None:
            return None
        for n in self.snapshots[to].nodes:
            if n.debug_handle == src.debug_handle and n.kind == src.kind:
                return n.id
        for n in self.snapshots[to].nodes:
            if n.debug_handle == src.debug_handle:
                return n.id
        return None

    def history(self, node_id: str, stage: int) -> list[tuple[int, str | None]]:
        """(stage index, node id or None) for every stage, through this node."""
        return [(i, self.step(node_id, stage, i)) for i in range(len(self.snapshots))]

    def last_touched(self, node_id: str, stage: int) -> str:
        """Name of the last stage at or before `stage` that added, rewrote or modified the node."""
        cur: str | None = node_id
        for i in range(stage, 0, -1):
            d = self.diffs[i]
            if d is None or cur is None:
                break
            if cur in d.added or cur in d.modified or any(b == cur for _, b in d.rewritten):
                return self.snapshots[i].stage
            cur = self._back[i].get(cur)
        return self.snapshots[0].stage
