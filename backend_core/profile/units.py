"""What a profile number is. The ETDump stores raw `et_pal_current_ticks()` values; this names them.

- QEMU with `-icount shift=S`: virtual time advances 2^S ns per executed instruction, and the board's
  SysTick counts at its clock (`hz`), so one instruction is 2^S * hz / 1e9 ticks, identical on every
  run. That is a count of instructions executed, NOT cycles: QEMU models no pipeline, caches, wait
  states or multi-cycle instructions (a 64-bit multiply-accumulate counts 1, like a NOP).
- the FVP: the PMU cycle counter, the FVP's own count, which ExecuTorch itself warns is not trusted
  for absolute timing (the FVP is not cycle-accurate).
- anything else: raw ticks of unknown scale (and all zeros with ExecuTorch's weak default ticks)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

INSTRUCTIONS = "instructions"
CYCLES = "cycles"
TICKS = "ticks"

INSTRUCTIONS_LABEL = "instructions executed (QEMU -icount), not cycles"
FVP_CYCLES_LABEL = "CPU cycles from the FVP's PMU (the FVP's count: not trusted for absolute timing)"
TICKS_LABEL = "raw et_pal_current_ticks() ticks (unknown scale)"


@dataclass(frozen=True)
class Unit:
    name: str                # instructions | cycles | ticks
    label: str               # what to print next to every number
    per_tick: float = 1.0    # units per raw ETDump tick
    deterministic: bool = False
    absolute: bool = False   # may be compared with a real board's cycles (never, on a simulator)
    source: str = ""         # e.g. "QEMU -icount shift=5, SysTick 32 MHz"

    def convert(self, ticks: int | float | None) -> int | None:
        """Raw ticks -> whole units (rounded)."""
        return None if ticks is None else int(round(ticks * self.per_tick))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "Unit":
        return Unit(**{k: v for k, v in d.items() if k in Unit.__dataclass_fields__})


def qemu_icount(shift: int, tick_hz: float) -> Unit:
    """The unit of a QEMU run with `-icount shift=<shift>` and a tick source counting at `tick_hz`."""
    ticks_per_instruction = (2 ** shift) * tick_hz / 1e9
    return Unit(INSTRUCTIONS, INSTRUCTIONS_LABEL, 1.0 / ticks_per_instruction, True, False,
                f"QEMU -icount shift={shift}, tick source {tick_hz / 1e6:g} MHz "
                f"({ticks_per_instruction:g} ticks per instruction)")


def fvp_cycles() -> Unit:
    return Unit(CYCLES, FVP_CYCLES_LABEL, 1.0, False, False, "FVP PMU cycle counter")


def raw_ticks(why: str = "") -> Unit:
    return Unit(TICKS, TICKS_LABEL, 1.0, False, False, why)
