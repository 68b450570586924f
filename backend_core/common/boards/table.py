"""CPU target string -> board (QEMU machine or Corstone FVP), its GCC flags and memory map.

Everything comes from kernels/boards.json, the one board table that kernels/cmake/boards.cmake reads too
(a test configures every board and checks that the generated linker script and flags agree). CPUs are
ExecuTorch's CortexMTargetConfig ones: M0 M0PLUS M3 M4 M7 M23 M33 M35P M55 M85."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from backend_core.common.cpus import TARGETS, normalise_target
from backend_core.common.errors import UnsupportedTargetError
from backend_core.common.kernel_sources import kernels_file

BOARDS_JSON = kernels_file("boards.json")
SIMULATORS: tuple[str, ...] = ("qemu", "fvp")
# The section layout every board shares (kernels/linker/); CMake generates the MEMORY block per board.
SECTIONS_SCRIPT = "linker/cmlens_sections.ld"
ICOUNT_UNIT = "instructions executed (QEMU -icount), not cycles"
# REGION_ALIASes of kernels/linker/cmlens_sections.ld, in the order boards.cmake writes them.
LINKER_ALIASES = ("VECTORS", "CODE", "DATA", "BIG", "STACK", "HEAP", "POOL", "TEMP", "MODEL")


@dataclass(frozen=True)
class MemoryRegion:
    """One MEMORY region of a board's linker script."""

    name: str          # e.g. "DTCM"
    origin: int
    length: int        # bytes
    access: str        # "rx", "rw", "rwx"
    what: str          # what it is on the board (from the memory map)


@dataclass(frozen=True)
class Board:
    """One board of kernels/: its CMake name, CPU, simulator, how to start it and its memory."""

    name: str                   # CMLENS_BOARD value, e.g. "mps3-an547"
    cpu: str                    # e.g. "cortex-m55"
    simulator: str              # "qemu" or "fvp"
    machine: str                # QEMU -M value, or the FVP binary name
    linker_script: str          # relative to kernels/: the shared sections (MEMORY is generated)
    description: str
    uart_base: int = 0
    uart_clock_hz: int = 0
    cpu_clock_hz: int = 0       # SysTick counts at this rate
    icount_shift: int | None = None   # QEMU -icount shift=N: one instruction = 2**N ns; None: not QEMU
    memory: tuple[MemoryRegion, ...] = ()
    sections: tuple[tuple[str, str], ...] = ()   # (alias, region): VECTORS, CODE, DATA, BIG
    runner_pools: tuple[tuple[str, int], ...] = ()  # ExecuTorch runner ET_ARM_BAREMETAL_<NAME>_POOL_SIZE
    reference: str = ""         # the datasheet / manual the numbers come from
    stack_bytes: int = 0        # main stack reservation (row's stack_bytes, else runtime_defaults)
    heap_bytes: int = 0         # newlib heap reservation (row's heap_bytes, else runtime_defaults)
    qemu_board: str = ""        # an MCU sized onto a QEMU board: the QEMU board's name (sized.py)
    table_file: str = ""        # the boards.json it comes from when not kernels/boards.json (CMLENS_BOARDS_JSON)

    @property
    def gcc_flags(self) -> tuple[str, ...]:
        """Compiler flags for this board's CPU, as kernels/cmake/boards.cmake uses them."""
        return gcc_flags(self.cpu)

    def region(self, alias_or_name: str) -> MemoryRegion:
        """A memory region by its name or by a section alias (VECTORS, CODE, DATA, BIG)."""
        name = dict(self.sections).get(alias_or_name, alias_or_name)
        for r in self.memory:
            if r.name == name:
                return r
        raise KeyError(f"{self.name} has no memory region {alias_or_name!r}")

    @property
    def linker_aliases(self) -> tuple[tuple[str, str], ...]:
        """Every REGION_ALIAS of the generated linker script, with kernels/cmake/boards.cmake's defaults
        for the aliases a row leaves out (STACK: DATA's region; HEAP/POOL/TEMP/MODEL: BIG's)."""
        named = dict(self.sections)
        return tuple((a, named.get(a) or named["DATA" if a == "STACK" else "BIG"])
                     for a in LINKER_ALIASES)

    @property
    def tick_unit(self) -> str:
        """What the board layer's et_pal_current_ticks() counts on this board."""
        return ICOUNT_UNIT if self.icount_shift is not None else "SysTick ticks"


def _int(value: str | int) -> int:
    return int(value, 0) if isinstance(value, str) else int(value)


def _board(row: dict, defaults: dict | None = None) -> Board:
    defaults = defaults or {}
    return Board(
        name=row["name"], cpu=row["cpu"], simulator=row["simulator"], machine=row["machine"],
        linker_script=SECTIONS_SCRIPT, description=row["description"],
        uart_base=_int(row["uart_base"]), uart_clock_hz=int(row["uart_clock_hz"]),
        cpu_clock_hz=int(row["cpu_clock_hz"]), icount_shift=row.get("icount_shift"),
        memory=tuple(MemoryRegion(m["name"], _int(m["origin"]), _int(m["length"]), m["access"], m["what"])
                     for m in row["memory"]),
        sections=tuple(row["sections"].items()),
        runner_pools=tuple((k, _int(v)) for k, v in row.get("runner_pools", {}).items()),
        reference=row.get("reference", ""),
        stack_bytes=_int(row.get("stack_bytes", defaults.get("stack_bytes", 0))),
        heap_bytes=_int(row.get("heap_bytes", defaults.get("heap_bytes", 0))),
        qemu_board=row.get("qemu_board", ""))


def load_table(path: Path = BOARDS_JSON) -> tuple[dict[str, tuple[str, ...]], dict[str, Board]]:
    """(GCC flags per CPU, boards by name) from a boards.json."""
    data = json.loads(Path(path).read_text())
    flags = {cpu: tuple(f) for cpu, f in data["cpus"].items()}
    defaults = data.get("runtime_defaults", {})
    return flags, {row["name"]: _board(row, defaults) for row in data["boards"]}


# GCC flags per CPU (-mthumb is added for every CPU), and the boards.
GCC_FLAGS, BOARDS = load_table()
_BY_CPU: dict[tuple[str, str], str] = {(b.cpu, b.simulator): b.name for b in BOARDS.values()}


def gcc_flags(target: str) -> tuple[str, ...]:
    """GCC flags for a CPU target string (`cortex-m4`, `M4`, ...), -mthumb included."""
    return GCC_FLAGS[normalise_target(target)] + ("-mthumb",)


def supported_targets(sim: str) -> list[str]:
    """CPU targets that have a board on this simulator, in ExecuTorch's CPU order."""
    return [t for t in TARGETS if (t, sim) in _BY_CPU]


def board_for(target: str, sim: str = "qemu") -> Board:
    """The board that runs `target` on `sim`; UnsupportedTargetError names the alternatives."""
    if sim not in SIMULATORS:
        raise UnsupportedTargetError(f"Unknown simulator {sim!r}.", "Use --sim qemu or --sim fvp.")
    cpu = normalise_target(target)
    name = _BY_CPU.get((cpu, sim))
    if name is not None:
        return BOARDS[name]
    other = "fvp" if sim == "qemu" else "qemu"
    hints = []
    if (cpu, other) in _BY_CPU:
        hints.append(f"{cpu} runs on --sim {other} ({BOARDS[_BY_CPU[(cpu, other)]].description}).")
    hints.append(f"{sim} boards exist for: " + ", ".join(supported_targets(sim)) + ".")
    what = "QEMU has no board with" if sim == "qemu" else "There is no Corstone FVP with"
    raise UnsupportedTargetError(f"{what} a {cpu} CPU.", " ".join(hints))


def board_by_name(name: str) -> Board:
    """Look a board up by its CMLENS_BOARD name."""
    try:
        return BOARDS[name]
    except KeyError:
        raise UnsupportedTargetError(
            f"Unknown board {name!r}.", "Known boards: " + ", ".join(BOARDS) + ".") from None
