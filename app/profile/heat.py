"""The graph coloured by cost: per final-graph node its share of the inference, as colours for the
graph's heat overlay (GraphPanel.set_heat, the API the Numerics tab uses) and the matching range,
label and colour stops. The log scale is deliberate: one conv often takes half the inference, and on
a linear scale every other node would look the same."""
from __future__ import annotations

import math
from typing import Any

from backend_core.target.profile.model import Profile

HEAT_MAP = "inferno"
FLOOR = 1e-4          # shares below 0.01 % are drawn at the floor


def cost_values(profile: Profile) -> dict[str, float]:
    """Final node id -> share of the inference (0..1), for nodes that ran an instruction."""
    out: dict[str, float] = {}
    for o in profile.ops:
        if o.node:
            out[o.node] = out.get(o.node, 0.0) + o.share
    return out


def cost_range(values: dict[str, float]) -> tuple[float, float]:
    """(lowest, highest) share shown by the colour bar, on a log scale: the costliest node is the top,
    and the bar spans at least a decade below it."""
    if not values:
        return FLOOR, 1.0
    hi = max(max(values.values()), FLOOR * 10)
    lo = max(min(min(values.values()), hi / 10), FLOOR)
    return lo, hi


def _unit(v: float, lo: float, hi: float) -> float:
    if hi <= lo:
        return 1.0
    v = max(v, FLOOR)
    return max(0.0, min(1.0, (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))))


def cost_colors(profile: Profile, value_range: tuple[float, float] | None = None) -> dict[str, Any]:
    """Node id -> QColor: bright (hot) for the largest share, dark for the smallest."""
    import pyqtgraph as pg

    values = cost_values(profile)
    lo, hi = value_range or cost_range(values)
    cmap = pg.colormap.get(HEAT_MAP)
    return {nid: cmap.map(_unit(v, lo, hi), mode="qcolor") for nid, v in values.items()}


def cost_stops(n: int = 11) -> list[Any]:
    """Colour stops from the lowest to the highest cost (what the graph's colour bar draws)."""
    import pyqtgraph as pg

    cmap = pg.colormap.get(HEAT_MAP)
    return [cmap.map(i / (n - 1), mode="qcolor") for i in range(n)]


def heat_args(profile: Profile) -> tuple[dict[str, Any], tuple[float, float], str, list[Any]]:
    """Everything GraphPanel.set_heat(colors, value_range, label, stops) takes, in percent of the
    inference (the label names the unit: instructions executed under QEMU -icount, not cycles)."""
    values = cost_values(profile)
    lo, hi = cost_range(values)
    label = f"share of {profile.unit.name} ({profile.unit.label}), log scale, %"
    return cost_colors(profile, (lo, hi)), (lo * 100.0, hi * 100.0), label, cost_stops()


def legend_texts(profile: Profile) -> tuple[str, str, str, str]:
    """(title, low, high, none) for the graph's colour bar (HeatLegend.set_texts) after set_heat()."""
    lo, hi = cost_range(cost_values(profile))
    return (f"cost: share of {profile.unit.name} ({profile.unit.label})", f"{lo:.2%}", f"{hi:.1%}  costliest",
            "ran no instruction")
