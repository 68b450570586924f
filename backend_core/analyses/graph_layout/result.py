"""The layout result handed to the canvas: boxes, cluster frames and edge splines in scene
coordinates. Shared by dot, the fallback layout and the disk cache."""
from __future__ import annotations

from dataclasses import dataclass, field

from backend_core.analyses.graph_layout.view_graph import LayoutOptions, ViewGraph


@dataclass
class EdgeRoute:
    src: str
    dst: str
    points: list[tuple[float, float]]         # cubic Bezier: p0, (c1, c2, p)*; scene coords
    arrow: tuple[float, float] | None = None  # arrow tip (the spline ends short of it)


@dataclass
class Layout:
    graph: ViewGraph
    boxes: dict[str, tuple[float, float, float, float]]          # item id -> x, y, w, h (top-left)
    clusters: dict[str, tuple[float, float, float, float]]       # module path -> x, y, w, h
    routes: list[EdgeRoute]
    width: float
    height: float
    options: LayoutOptions = field(default_factory=LayoutOptions)
    seconds: float = 0.0
    from_cache: bool = False
    engine: str = "dot"
    note: str = ""                            # why the simple fallback layout was used

