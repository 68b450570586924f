"""Boards a model can be checked against: the simulated boards of kernels/boards.json (the firmware's
one board table: QEMU machines and Corstone FVPs) and the MCUs of resources/boards/mcus.json (vendor
figures, each row citing its document), plus `--ram/--flash` overrides. Qt-free, ExecuTorch-free."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.common.kernel_sources import kernels_file

ROOT = Path(__file__).resolve().parents[3]
MCUS_JSON = ROOT / "resources" / "boards" / "mcus.json"
KERNEL_BOARDS_JSON = kernels_file("boards.json")

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(i?b?)\s*$", re.I)
_MULT = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


@dataclass(frozen=True)
class Region:
    name: str
    size: int                 # bytes
    kind: str                 # "ram" | "flash"
    what: str = ""


@dataclass(frozen=True)
class BoardSpec:
    name: str
    core: str
    clock_mhz: float | None
    regions: tuple[Region, ...]
    source: str
    description: str = ""
    notes: str = ""
    simulated: bool = False
    # where the simulated boards' linker script puts code and the big .bss pools (kernels/boards.json)
    placement: dict[str, str] = field(default_factory=dict)

    @property
    def ram(self) -> list[Region]:
        return [r for r in self.regions if r.kind == "ram"]

    @property
    def flash(self) -> list[Region]:
        return [r for r in self.regions if r.kind == "flash"]

    @property
    def ram_bytes(self) -> int:
        return sum(r.size for r in self.ram)

    @property
    def flash_bytes(self) -> int:
        return sum(r.size for r in self.flash)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "core": self.core, "clock_mhz": self.clock_mhz,
                "ram_bytes": self.ram_bytes, "flash_bytes": self.flash_bytes,
                "regions": [{"name": r.name, "bytes": r.size, "kind": r.kind, "what": r.what} for r in self.regions],
                "source": self.source, "simulated": self.simulated, "notes": self.notes}


def parse_size(text: str | int, what: str = "size") -> int:
    """`256K`, `1M`, `1.5MiB`, `65536` -> bytes (KiB = 1024). BadInputError for negative or garbled text."""
    if isinstance(text, int):
        if text < 0:
            raise BadInputError(f"The {what} must not be negative ({text}).", "Give a size such as 256K or 1M.")
        return text
    if str(text).strip().startswith("-"):
        raise BadInputError(f"The {what} must not be negative ({text}).", "Give a size such as 256K or 1M.")
    m = _SIZE.match(str(text))
    if not m:
        raise BadInputError(f"Cannot read the {what} {text!r}.",
                            "Give a size in bytes or with K/M/G (KiB/MiB/GiB), e.g. --ram 256K --flash 1M.")
    value = float(m.group(1)) * _MULT[m.group(2).lower()]
    return int(value)


def _mcu_boards() -> list[BoardSpec]:
    data = json.loads(MCUS_JSON.read_text())
    out = []
    for b in data["boards"]:
        regions = tuple(Region(r["name"], int(r["kib"] * 1024), kind, r.get("what", ""))
                        for kind in ("ram", "flash") for r in b[kind])
        out.append(BoardSpec(b["name"], b["core"], b.get("clock_mhz"), regions, b["source"],
                             b.get("part", ""), b.get("notes", "")))
    return out


def _kernel_boards() -> list[BoardSpec]:
    """kernels/boards.json rows: every region is RAM on a simulator; the region the linker script
    uses for CODE is also counted as the board's flash (the .pte and the runner's code live there)."""
    if not KERNEL_BOARDS_JSON.is_file():
        return []
    data = json.loads(KERNEL_BOARDS_JSON.read_text())
    out = []
    for b in data.get("boards", []):
        sections = b.get("sections", {})
        regions = []
        for m in b.get("memory", []):
            size = int(str(m["length"]), 0)
            kind = "flash" if m["name"] == sections.get("CODE") and "w" not in m.get("access", "rw") else "ram"
            regions.append(Region(m["name"], size, kind, m.get("what", "")))
        clock = b.get("cpu_clock_hz")
        out.append(BoardSpec(b["name"], b["cpu"], clock / 1e6 if clock else None, tuple(regions),
                             b.get("reference", "kernels/boards.json"), b.get("description", ""),
                             simulated=True, placement=dict(sections)))
    return out


def all_boards() -> dict[str, BoardSpec]:
    boards = {b.name: b for b in _kernel_boards()}
    boards.update({b.name: b for b in _mcu_boards()})
    return boards


def board_named(name: str) -> BoardSpec:
    """A board by name (case-insensitive); BadInputError lists the known ones."""
    boards = all_boards()
    key = name.strip().lower()
    for n, b in boards.items():
        if n.lower() == key:
            return b
    raise BadInputError(f"Unknown board {name!r}.", "Known boards: " + ", ".join(sorted(boards))
                        + ". Or give the sizes: --ram 256K --flash 1M.")


def custom_board(ram: str | int, flash: str | int | None = None, core: str = "") -> BoardSpec:
    """A board from `--ram/--flash` alone: one contiguous RAM region and one flash region."""
    r = parse_size(ram, "RAM size")
    regions = [Region("RAM", r, "ram")]
    if flash is not None:
        regions.append(Region("FLASH", parse_size(flash, "flash size"), "flash"))
    label = f"custom ({_fmt(r)} RAM" + (f", {_fmt(regions[1].size)} flash)" if flash is not None else ")")
    return BoardSpec(label, core, None, tuple(regions), "--ram/--flash on the command line")


def _fmt(n: int) -> str:
    return f"{n // 1024 ** 2} MiB" if n >= 1024 ** 2 and n % 1024 ** 2 == 0 else f"{n / 1024:g} KiB"
