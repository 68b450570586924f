"""Where to look in a graph: the first zoom, fit, search matches and the next fallback.

Pure decisions on a GraphView / snapshot, so GraphPanel only wires them to its toolbar.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from backend_core.common.snapshot.model import KIND_FALLBACK, GraphSnapshot

from app.graph.view import GraphView

if TYPE_CHECKING:
    from app.lowering.session import LoweringSession


def initial_view(view: GraphView) -> None:
    """First look at a graph: fit if that keeps labels readable, else a readable zoom
    (0.75-1.0) starting at the top of the graph."""
    scene = view.graph_scene()
    if scene is None:
        return
    r = scene.sceneRect()
    vp = view.viewport()
    k = min(vp.width() / max(r.width(), 1), vp.height() / max(r.height(), 1))
    if k >= 0.75:
        view.fit()
        return
    k = max(0.75, min(1.0, (vp.width() - 10) / max(r.width(), 1)))
    view.resetTransform()
    view.scale(k, k)
    view.centerOn(r.center().x(), r.top() + vp.height() / (2 * k))
    view.viewChanged.emit()


def fit_view(view: GraphView) -> None:
    """Fit the graph; tall chains get a readable width instead, starting at the top."""
    scene = view.graph_scene()
    if scene is None:
        return
    r = scene.sceneRect()
    vp = view.viewport()
    if r.height() > 3 * r.width() and r.height() > vp.height() * 2.5:
        view.fit_width()
    else:
        view.fit()


def search_matches(snap: GraphSnapshot, text: str) -> list[str]:
    """Ids of the nodes whose id, op, name or module path contains `text` (lower case)."""
    return [n.id for n in snap.nodes
            if text in n.id.lower() or text in n.target.lower() or text in n.name.lower()
            or text in n.module_path.lower()]


def fallback_ids(session: LoweringSession, stage: int) -> tuple[int, list[str]] | str:
    """The portable fallbacks of `stage`, else of the final graph, as (stage, ids);
    a status message when there are none to visit."""
    snap = session.snapshots[stage]
    fbs = [n.id for n in snap.nodes if n.kind == KIND_FALLBACK]
    if fbs:
        return stage, fbs
    final = session.final()
    if final is None:
        return "No fallbacks in this stage (the final graph is not ready)."
    fbs = [n.id for n in final.nodes if n.kind == KIND_FALLBACK]
    if not fbs:
        return "No portable fallbacks: every compute op lowered to CMSIS-NN."
    return final.index, fbs
