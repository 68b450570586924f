"""Per-core timing tables (resources/timing/<core>.json: cycles per instruction class, each with its
source), the boards' flash wait states (resources/timing/boards.json) and the fitted parameters plus the
measured error (resources/timing/validation.json, written by bench/cycle_estimate.py: the error shown
beside every estimate is read from there, never a constant in code)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError

TIMING_DIR = Path(__file__).resolve().parents[3] / "resources" / "timing"
VALIDATION = "validation.json"


@dataclass(frozen=True)
class CoreTiming:
    core: str
    cycles: dict[str, float | None]         # class -> cycles per instruction (None: not on this core)
    sources: dict[str, str]
    clock_min: float
    clock_max: float
    stand_in: str | None = None              # the core whose QEMU stream this core's estimate runs on
    about: str = ""


def known_cores(folder: Path = TIMING_DIR) -> list[str]:
    return sorted(p.stem for p in folder.glob("cortex-*.json"))


@lru_cache(maxsize=None)
def core_timing(cpu: str, folder: Path = TIMING_DIR) -> CoreTiming:
    """The core's table; BadInputError (exit 2) naming the known cores when there is none."""
    path = folder / f"{cpu}.json"
    if not path.is_file():
        raise BadInputError(f"No timing table for {cpu}: the cycle estimate knows {', '.join(known_cores(folder))}.",
                            f"Profile on one of those cores, or add resources/timing/{cpu}.json.")
    d = json.loads(path.read_text())
    cycles = {k: (None if v is None else float(v["cycles"])) for k, v in d["classes"].items()}
    sources = {k: v["source"] for k, v in d["classes"].items() if v}
    clock = d.get("clock_mhz") or {}
    return CoreTiming(d["core"], cycles, sources, float(clock.get("min", 1)), float(clock.get("max", 1000)),
                      d.get("stand_in"), d.get("about", ""))


@lru_cache(maxsize=None)
def _boards(folder: Path = TIMING_DIR) -> dict[str, Any]:
    path = folder / "boards.json"
    return json.loads(path.read_text())["boards"] if path.is_file() else {}


def board_memory(name: str | None, folder: Path = TIMING_DIR) -> dict[str, Any]:
    """{clock_mhz, flash_wait_states, source, ...} of a board of mcus.json ({} when unknown)."""
    return dict(_boards(folder).get(name or "", {}))


def validation(folder: Path = TIMING_DIR) -> dict[str, Any]:
    """The bench's fit and measured error ({} before bench/cycle_estimate.py has written it)."""
    path = folder / VALIDATION
    return json.loads(path.read_text()) if path.is_file() else {}


def check_clock(core: CoreTiming, mhz: float) -> None:
    """BadInputError (exit 2) for a clock outside the core's range."""
    if not core.clock_min <= mhz <= core.clock_max:
        raise BadInputError(f"--clock-mhz {mhz:g} is outside the {core.core}'s range "
                            f"({core.clock_min:g}-{core.clock_max:g} MHz in resources/timing/{core.core}.json).",
                            f"Pass a clock between {core.clock_min:g} and {core.clock_max:g} MHz.")


@dataclass
class Parameters:
    """The fitted memory term: cycles a load stalls on the anchor board, and how that moves per wait state."""

    stall_per_load: float = 0.0
    per_wait_state: float = 0.0            # extra stall per load per wait state over the anchor board's
    anchor_wait_states: int | None = None
    fitted: bool = False
    notes: list[str] = field(default_factory=list)


def parameters(core: str, wait_states: int | None, fit: dict[str, Any], floor: float = 0.0) -> Parameters:
    """The stall per load for `core` at `wait_states` (None: the board's figure is unknown); never below
    `floor` (a load costs at least one cycle)."""
    row = (fit.get("cores") or {}).get(core)
    per_ws = float(fit.get("per_wait_state", 0.0))
    if not row:
        return Parameters(0.0, per_ws, None, False, [f"no fitted memory stall for {core}: 0 per load"])
    p = Parameters(float(row["stall_per_load"]), per_ws, row.get("anchor_wait_states"), True)
    if wait_states is not None and p.anchor_wait_states is not None:
        p.stall_per_load = max(floor, p.stall_per_load + per_ws * (wait_states - p.anchor_wait_states))
    elif wait_states is not None:
        p.notes.append(f"the anchor board's wait states are unknown: --flash-wait-states {wait_states} adds "
                       f"{per_ws:.3g} cycles per load per wait state to the fitted stall")
        p.stall_per_load = max(floor, p.stall_per_load + per_ws * wait_states)
    return p
