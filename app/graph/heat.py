"""Heat colours of any stage, derived from the colours of the FINAL graph.

Numerics only know final-graph nodes; this maps their colours back through provenance so every
stage of the pass timeline can show the same overlay.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor

if TYPE_CHECKING:
    from app.lowering.session import LoweringSession


def heat_for_stage(session: LoweringSession, heat: dict[str, QColor], index: int) -> dict[str, QColor]:
    """The heat colours of stage `index`: final-graph colours mapped through provenance
    (step, else the same debug handle); a node that several final nodes came from takes the
    hottest (brightest) colour."""
    snaps = session.snapshots
    final = session.final()
    out: dict[str, QColor] = {}
    if final is None or index >= len(snaps):
        return out
    if index == final.index:
        return {nid: c for nid, c in heat.items() if final.node(nid) is not None}
    prov = session.provenance()
    target = snaps[index]
    by_handle: dict[int, str] = {}
    for n in target.nodes:
        if n.debug_handle is not None:
            by_handle.setdefault(n.debug_handle, n.id)
    for nid, color in heat.items():
        mapped = prov.step(nid, final.index, index)
        if mapped is None:
            src = final.node(nid)
            if src is not None and src.debug_handle is not None:
                mapped = by_handle.get(src.debug_handle)
        if mapped is None:
            continue
        old = out.get(mapped)
        if old is None or color.lightnessF() > old.lightnessF():
            out[mapped] = color
    return out


class StageHeat:
    """The heat overlay's state: FINAL-graph colours (None: off) and their per-stage mapping, cached
    because the user scrubs through stages and each mapping walks the provenance."""

    def __init__(self, session: LoweringSession) -> None:
        self.session = session
        self.colors: dict[str, QColor] | None = None
        self._by_stage: dict[int, dict[str, QColor]] = {}

    def set(self, colors: dict[str, QColor] | None) -> None:
        self.colors = dict(colors) if colors else None
        self._by_stage.clear()

    def clear_cache(self) -> None:
        self._by_stage.clear()

    def for_stage(self, index: int) -> dict[str, QColor]:
        if self.colors is None:
            return {}
        cached = self._by_stage.get(index)
        if cached is None:
            cached = self._by_stage[index] = heat_for_stage(self.session, self.colors, index)
        return cached
