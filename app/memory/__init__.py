"""The Memory panel: what the lowered model needs on the MCU against a board (stacked bars per kind),
the live bytes per op (timeline, peak marked, float islands shaded), a board picker. It shows the
`memory` report the lowering worker computes (`--memory`): this process never reads a .pte."""
from __future__ import annotations

from .panel import MemoryPanel

__all__ = ["MemoryPanel"]
