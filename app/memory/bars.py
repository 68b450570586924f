"""Stacked bars: RAM and flash, each split by kind (planned arena, Method::load, temp pool, runner
statics; constants, program, runner code), drawn against the board's capacity (a grey bar behind)."""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg

from backend_core.target.memory.fit import kib

from app.widgets.plot_text import legend_above

# Colours of the memory kinds (this panel only; the node-kind colours live in resources/colors.json).
KIND_COLORS = {
    "planned arena": "#1e88e5", "Method::load": "#fb8c00", "inputs": "#fdd835", "temp pool": "#8d6e63",
    "fast memory (mem_id 2)": "#3949ab", "runtime .data/.bss": "#8e24aa", "stack": "#d81b60",
    "heap": "#f06292", "ETDump buffer": "#ffb74d",
    "constants": "#43a047", "program": "#00897b", "runtime code": "#6d4c41",
}
CAPACITY = "#cfd8dc"
BAR_H = 0.6


def segments(rep: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    """(kind, bytes) per row, from a memory report."""
    ma = rep["method_allocator"]
    planned = rep["planned_bytes"]
    fast = planned[1] if len(planned) > 1 else 0
    ram = [("planned arena", ma["planned"]), ("Method::load", ma["loaded"]), ("inputs", ma["input"]),
           ("temp pool", rep["temp_allocator_bytes"])]
    if fast:
        ram.append(("fast memory (mem_id 2)", fast))
    flash = [("constants", rep["constant_bytes"]), ("program", rep["program_bytes"])]
    rt = rep.get("runtime")
    if rt:       # the runtime around the model (backend_core.target.memory.runtime): the whole firmware
        if rt.get("event_tracer"):
            ram.append(("ETDump buffer", rep.get("etdump_base64_bytes", 0)))
        ram += [("runtime .data/.bss", rt["data"] + rt["bss"]), ("stack", rt["stack"]), ("heap", rt["heap"])]
        flash.append(("runtime code", rt["code"] + rt["data"]))
    return {"RAM": [s for s in ram if s[1] > 0], "flash": [s for s in flash if s[1] > 0]}


def capacities(rep: dict[str, Any]) -> dict[str, int | None]:
    b = rep.get("board")
    if not b:
        return {"RAM": None, "flash": None}
    if b.get("simulated"):
        return {"RAM": b["ram_bytes"], "flash": None}
    return {"RAM": b["ram_bytes"], "flash": b["flash_bytes"] or None}


class StackedBars:
    """Draws into a PlotItem: row 1 = RAM, row 0 = flash; x in KiB. The kinds' legend sits above the
    bars (outside the data); each segment's bytes are its tooltip."""

    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        self.items: list[Any] = []
        self.legend = legend_above(plot, columns=3)

    def draw(self, rep: dict[str, Any] | None) -> dict[str, list[tuple[str, int]]]:
        """Draw the rows; the left axis names each row with the board's capacity."""
        for it in self.items:
            self.plot.removeItem(it)
        self.items = []
        self.legend.clear()
        if rep is None:
            return {}
        segs = segments(rep)
        caps = capacities(rep)
        self.plot.getAxis("left").setTicks([[(1, "RAM" + (f" / {_k(caps['RAM'])}" if caps["RAM"] else "")),
                                             (0, "flash" + (f" / {_k(caps['flash'])}" if caps["flash"] else ""))]])
        for y, row in ((1, "RAM"), (0, "flash")):
            cap = caps[row]
            total = sum(b for _, b in segs[row])
            if cap:
                # the board's capacity, clipped at 4x the need so small models stay visible
                shown = min(cap, max(total * 4, 1))
                bg = pg.BarGraphItem(x0=[0], y=[y], width=[shown / 1024], height=BAR_H + 0.25,
                                     brush=pg.mkBrush(CAPACITY), pen=pg.mkPen("#90a4ae"))
                self._add(bg)
            x = 0.0
            for kind, nbytes in segs[row]:
                bar = pg.BarGraphItem(x0=[x], y=[y], width=[nbytes / 1024], height=BAR_H,
                                      brush=pg.mkBrush(KIND_COLORS.get(kind, "#9e9e9e")), pen=pg.mkPen("#37474f"))
                bar.setToolTip(f"{row}: {kind} {nbytes:,} B")
                self._add(bar)
                x += nbytes / 1024
                self._legend_entry(KIND_COLORS.get(kind, "#9e9e9e"), f"{kind} {kib(nbytes)}")
        if any(caps.values()):
            self._legend_entry(CAPACITY, "board (drawn up to 4× the need)")
        self.plot.getViewBox().autoRange(padding=0.04)
        return segs

    def _legend_entry(self, color: str, text: str) -> None:
        sample = pg.ScatterPlotItem(symbol="s", size=10, brush=pg.mkBrush(color), pen=pg.mkPen("#37474f"))
        self.legend.addItem(sample, text)

    def _add(self, item: Any) -> None:
        self.plot.addItem(item)
        self.items.append(item)


def _k(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n / 1024:g} KiB"
