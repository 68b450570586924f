"""Search in the graph on screen: the matches of the toolbar's search text, highlighted in the scene,
and Enter stepping through them (selecting each)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.graph.navigation import search_matches
from app.graph.scene import GraphScene
from app.graph.toolbar import GraphToolbar


class SearchFinder:
    """Reads the toolbar's search box, marks matches in the current scene, steps through them."""

    def __init__(self, toolbar: GraphToolbar, scene: Callable[[], GraphScene | None],
                 select: Callable[..., Any]) -> None:
        self.toolbar, self.scene, self.select = toolbar, scene, select
        self.matches: list[str] = []
        self.pos = -1

    def update(self) -> None:
        text = self.toolbar.search.text().strip().lower()
        scene = self.scene()
        if scene is None:
            return
        if not text:
            self.matches = []
            scene.set_matches(set())
            self.toolbar.match_label.setText("")
            return
        self.matches = search_matches(scene.snapshot, text)
        self.pos = -1
        scene.set_matches(set(self.matches))
        n = len(self.matches)
        self.toolbar.match_label.setText(f"  {n} match{'es' if n != 1 else ''}  ")

    def next(self) -> None:
        """Enter: select the next match (a pending debounced search runs first)."""
        if self.toolbar.search_timer.isActive():
            self.update()
        self.toolbar.search_timer.stop()
        if not self.matches:
            return
        self.pos = (self.pos + 1) % len(self.matches)
        self.toolbar.match_label.setText(f"  {self.pos + 1}/{len(self.matches)}  ")
        self.select(self.matches[self.pos], center=True)
