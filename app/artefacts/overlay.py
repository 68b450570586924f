"""A recorded run's per-layer gaps as a colour overlay on the graph (GraphPanel.set_heat's arguments):
bit-identical layers green, the rest from orange to red by log10 MSE in real units (LSB MSE when the
scale is unknown). Keys are the final stage's node ids, so other stages get them through provenance."""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtGui import QColor

IDENTICAL = QColor("#66bb6a")
FLOOR = -12.0
STOPS = [QColor("#c62828"), QColor("#ef6c00"), QColor("#ffb74d"), IDENTICAL]       # worst -> best


def _log_mse(g: dict[str, Any]) -> float:
    real = g.get("mse_real")
    if real is None and str(g.get("dtype", "")).startswith("torch.float"):
        real = g.get("mse")
    return math.log10(max(real if real is not None else (g.get("mse") or 0.0), 10 ** FLOOR))


def gap_heat(gaps: dict[str, Any] | None) -> tuple[dict[str, QColor], tuple[float, float], str, list[QColor]] | None:
    """(colors, value range, label, stops) for GraphPanel.set_heat, or None without gaps."""
    layers = [g for g in (gaps or {}).get("layers", []) if g.get("node_id")]
    if not layers:
        return None
    values = {g["node_id"]: _log_mse(g) for g in layers}
    hi = max(max(values.values()), FLOOR + 1.0)
    colors: dict[str, QColor] = {}
    for g in layers:
        v = values[g["node_id"]]
        if g.get("mismatched", 1) == 0:
            c = IDENTICAL
        else:
            t = (v - FLOOR) / (hi - FLOOR)           # 0 (tiny gap) .. 1 (the worst layer)
            c = QColor.fromHsvF(max(0.0, 0.09 * (1.0 - t)), 0.85, 0.9)
        for nid in g.get("node_ids") or [g["node_id"]]:
            colors[nid] = c
    return colors, (FLOOR, hi), "target vs host gap", STOPS


def gap_legend_texts(gaps: dict[str, Any] | None) -> tuple[str, str, str, str]:
    """(title, low, high, none) for the colour bar (its stops run worst -> best, left to right)."""
    layers = [g for g in (gaps or {}).get("layers", []) if g.get("node_id")]
    worst = max((_log_mse(g) for g in layers), default=FLOOR)
    low = "bit-identical" if worst <= FLOOR else f"MSE 1e{worst:.0f}  largest gap"
    return ("recorded run: target vs host per layer (MSE, real units)", low, "bit-identical", "not measured")
