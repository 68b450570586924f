"""Keep the selected op across a re-lowering of the same model (the file changed on disk, Lower again).

Node ids are FX names: an edit can renumber them (a new LayerNorm before a linear makes `linear_1` the
old `linear`'s neighbour). So the selection is carried through provenance: the selected node is traced
back to the op it came from in the first stage (the op the user wrote), that op is found in the new
lowering's first stage by what it is (target, module path, name, source line), and traced forward to
the same stage again. Qt-free on purpose: plain snapshots in, (stage, node) out."""
from __future__ import annotations

from dataclasses import dataclass

from backend_core.common.provenance import Provenance
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot


@dataclass(frozen=True)
class Anchor:
    """What was selected, in terms that survive a re-lowering."""

    stage_name: str
    at_final: bool                  # the view was on the last stage: stay on the last stage
    node: NodeSnapshot              # the selected node, in its stage
    origin: NodeSnapshot | None     # the node it came from in the first stage


def anchor_of(snapshots: list[GraphSnapshot], stage: int, node_id: str | None,
              prov: Provenance | None = None) -> Anchor | None:
    if not snapshots or node_id is None or not 0 <= stage < len(snapshots):
        return None
    node = snapshots[stage].node(node_id)
    if node is None:
        return None
    origin_id = (prov or Provenance(list(snapshots))).nearest(node_id, stage, 0)
    origin = snapshots[0].node(origin_id) if origin_id else None
    return Anchor(snapshots[stage].stage, stage == len(snapshots) - 1, node, origin)


def _score(a: NodeSnapshot, b: NodeSnapshot) -> int:
    return ((a.module_path == b.module_path and bool(a.module_path)) * 4 + (a.name == b.name) * 2
            + (a.source is not None and a.source == b.source))


def match_node(want: NodeSnapshot, candidates: tuple[NodeSnapshot, ...] | list[NodeSnapshot]) -> NodeSnapshot | None:
    """The candidate that is the same op: the same target, then the best of module path, name and source
    line (at least one must agree)."""
    same = [n for n in candidates if n.target == want.target and n.fx_op == want.fx_op]
    best = max(same, key=lambda n: _score(want, n), default=None)
    return best if best is not None and _score(want, best) > 0 else None


def resolve(anchor: Anchor, snapshots: list[GraphSnapshot],
            prov: Provenance | None = None) -> tuple[int, str | None] | None:
    """(stage index, node id or None) of the anchor in a new lowering; None without stages."""
    if not snapshots:
        return None
    stage = len(snapshots) - 1
    if not anchor.at_final:
        stage = next((s.index for s in snapshots if s.stage == anchor.stage_name), stage)
    if anchor.origin is not None:
        first = match_node(anchor.origin, snapshots[0].nodes)
        if first is not None:
            found = (prov or Provenance(list(snapshots))).nearest(first.id, 0, stage)
            if found is not None:
                return stage, found
    direct = match_node(anchor.node, snapshots[stage].nodes)
    return stage, direct.id if direct is not None else None
