"""Grouping choices of the graph pane and the background layout job they drive.

Kept apart from the widget so the job (which runs on the layout thread) touches no Qt object.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend_core.analyses.graph_layout import Layout, LayoutOptions, auto_collapse, compute_layout
from backend_core.common.snapshot.model import GraphSnapshot

from app.runtime.background import BackgroundRunner

SCENE_CACHE = 10


@dataclass(frozen=True)
class GroupSpec:
    """The user's grouping choices, applied on top of the automatic collapse."""

    show_weights: bool = False
    expanded: frozenset[str] = frozenset()
    collapsed: frozenset[str] = frozenset()


def layout_job(snap: GraphSnapshot, spec: GroupSpec, background: BackgroundRunner) -> Callable[[], Layout]:
    """Runs on the background thread."""
    def run() -> Layout:
        auto = auto_collapse(snap, spec.show_weights)
        opts = LayoutOptions(collapsed=frozenset((auto - spec.expanded) | spec.collapsed),
                             show_weights=spec.show_weights)
        return compute_layout(snap, opts, register=background.register_process)
    return run
