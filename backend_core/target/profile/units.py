"""What a profile number is. The ETDump stores raw `et_pal_current_ticks()` values; this names them.

- QEMU with `-icount shift=S`: virtual time advances 2^S ns per executed instruction, and the board's
  SysTick counts at its clock (`hz`), so one instruction is 2^S * hz / 1e9 ticks, identical on every
  run. That is a count of instructions executed, NOT cycles: QEMU models no pipeline, caches, wait
  states or multi-cycle instructions (a 64-bit multiply-accumulate counts 1, like a NOP).
- the FVP: processor-clock ticks (SysTick; the runner's PMU line counts the same clock), the FVP's own
  count, which ExecuTorch itself warns is not trusted for absolute timing (not cycle-accurate).
- anything else: raw ticks of unknown scale (and all zeros with ExecuTorch's weak default ticks)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

INSTRUCTIONS = "instructions"
CYCLES = "cycles"
TICKS = "ticks"

INSTRUCTIONS_LABEL = "instructions executed (QEMU -icount), not cycles"
FVP_CYCLES_LABEL = "CPU cycles as the FVP counts them (not trusted for absolute timing)"
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


def qemu_icount(shift: int, tick_hz: float | None = None) -> Unit:
    """A QEMU run with `-icount shift=<shift>`. The board layer (kernels/common/ticks.c) already turns
    SysTick ticks into instructions inside et_pal_current_ticks(), so the ETDump holds instructions
    (per_tick 1); `tick_hz` is only for the description."""
    clock = f", SysTick at {tick_hz / 1e6:g} MHz converted by the board layer" if tick_hz else ""
    return Unit(INSTRUCTIONS, INSTRUCTIONS_LABEL, 1.0, True, False, f"QEMU -icount shift={shift}{clock}")


def unit_for(simulator: str, icount_shift: int | None, icount: bool, tick_hz: float | None = None) -> Unit:
    """The unit of a run's ETDump timestamps, from how the run was made."""
    if simulator == "qemu":
        if icount and icount_shift is not None:
            return qemu_icount(icount_shift, tick_hz)
        return raw_ticks("QEMU without -icount: SysTick follows host time, not a cost measure")
    return fvp_cycles()


def fvp_cycles() -> Unit:
    """The FVP: SysTick counts the processor clock as the FVP models it (cycles, not cycle-accurate)."""
    return Unit(CYCLES, FVP_CYCLES_LABEL, 1.0, False, False, "FVP SysTick at the processor clock")


def raw_ticks(why: str = "") -> Unit:
    return Unit(TICKS, TICKS_LABEL, 1.0, False, False, why)
