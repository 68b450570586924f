"""Texts and diff colours for the stage a graph view shows.

Pure functions of the snapshot/diffs: they decide what the info line says and which nodes the
compare overlay marks, without touching any widget.
"""
from __future__ import annotations

from typing import Sequence

from backend_core.common.diff import StageDiff
from backend_core.common.snapshot.model import KIND_FALLBACK

from app.graph.scene import GraphScene


def stage_info(scene: GraphScene) -> str:
    """The info line above the graph: nodes, collapsed groups, fallbacks and layout time."""
    lay = scene.layout
    snap = scene.snapshot
    n_groups = sum(1 for i in lay.graph.items.values() if i.is_group)
    fb = sum(1 for n in snap.nodes if n.kind == KIND_FALLBACK)
    return (f"{snap.index}: {snap.stage} — {len(snap.nodes)} nodes"
            + (f", {n_groups} collapsed groups" if n_groups else "")
            + (f", {fb} fallback{'s' if fb > 1 else ''}" if fb else "")
            + f" · layout {lay.seconds * 1000:.0f} ms{' (cached)' if lay.from_cache else ''}"
            + (" (simple layout: dot unavailable)" if lay.engine != "dot" else ""))


def diff_states(diffs: Sequence[StageDiff | None], side: str, index: int) -> dict[str, str]:
    """node id -> added / rewritten (main side) or removed / rewritten (left, previous stage)."""
    states: dict[str, str] = {}
    if side == "main" and index < len(diffs) and (d := diffs[index]) is not None:
        states.update({i: "added" for i in d.added})
        states.update({b: "rewritten" for _, b in d.rewritten})
    elif side == "left" and index + 1 < len(diffs) and (d := diffs[index + 1]) is not None:
        states.update({i: "removed" for i in d.removed})
        states.update({a: "rewritten" for a, _ in d.rewritten})
    return states
