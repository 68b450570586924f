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
