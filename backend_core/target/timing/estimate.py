"""Instructions by class -> estimated cycles and milliseconds on a core at a clock, per op and in all.

cycles = sum over classes (instructions x the core table's cycles) + loads x the fitted stall per load
(the board's flash wait states moved by --flash-wait-states). A class the core's table has no figure for
(an MVE instruction on an M4 table, an unknown mnemonic) is counted as unmodelled at one cycle each and
shown as its share; above LOW_CONFIDENCE the estimate says it is low-confidence."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.target.timing.model import CoreTiming, Parameters, board_memory, check_clock, core_timing, \
    parameters, validation

LOW_CONFIDENCE = 0.05
SOURCES_OF_ERROR = ("caches and flash accelerators (ART, I-/D-cache) are averaged into one fitted stall per load",
                    "bus contention and DMA are not modelled", "the framework around the kernels differs from "
                    "the measured ones (TFLM, microTVM)")


@dataclass
class Estimate:
    """What `cmlens run --profile` prints and its JSON carries (profile.estimate)."""

    core: str
    stream_core: str                 # the QEMU stream it was computed from (M85: the M55's)
    board: str
    clock_mhz: float
    clock_source: str                # "board table" or "--clock-mhz"
    flash_wait_states: int | None
    wait_states_source: str
    stall_per_load: float
    cycles: float                    # the kernels' (the profile's ops)
    ms: float
    per_op: list[float]              # cycles per profile row (None rows: 0)
    unmodelled: int
    unmodelled_share: float
    low_confidence: bool
    error_pct: float | None          # the bench's measured error on held-out published measurements
    error_basis: str
    notes: list[str] = field(default_factory=list)
    sources_of_error: list[str] = field(default_factory=lambda: list(SOURCES_OF_ERROR))   # shown beside it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def op_cycles(classes: dict[str, int], core: CoreTiming, stall: float) -> tuple[float, int]:
    """(cycles, unmodelled instructions) of one op's class counts."""
    cycles, unmodelled = 0.0, 0
    for cls, n in classes.items():
        if not n:
            continue
        c = core.cycles.get(cls)
        if c is None:
            unmodelled += n
            cycles += n
        else:
            cycles += n * c
    return cycles + classes.get("load", 0) * stall, unmodelled


def estimate(rows: list[dict[str, int] | None], cpu: str, board: str | None, *, clock_mhz: float | None = None,
             flash_wait_states: int | None = None, stream_core: str | None = None,
             fit: dict[str, Any] | None = None) -> Estimate:
    """The estimate of a profile's rows (each op's classes) on `cpu` (BadInputError: no table, bad clock)."""
    core = core_timing(cpu)
    mem = board_memory(board)
    fit = validation() if fit is None else fit
    clock = clock_mhz if clock_mhz is not None else mem.get("clock_mhz")
    clock_source = "--clock-mhz" if clock_mhz is not None else ("board table" if clock else "")
    notes: list[str] = []
    if clock is None:
        clock, clock_source = core.clock_max / 2, "no clock known for this board: half the core's maximum"
    check_clock(core, float(clock))
    ws = flash_wait_states if flash_wait_states is not None else mem.get("flash_wait_states")
    ws_source = "--flash-wait-states" if flash_wait_states is not None else (
        "resources/timing/boards.json" + ("" if mem.get("checked") else " (not re-read from the vendor manual)")
        if ws is not None else "unknown for this board")
    par: Parameters = parameters(cpu, ws, fit, 1 - (core.cycles.get("load") or 1))
    notes += par.notes
    per_op, unmodelled, total_instr = [], 0, 0
    for classes in rows:
        c, u = op_cycles(classes or {}, core, par.stall_per_load)
        per_op.append(c)
        unmodelled += u
        total_instr += sum((classes or {}).values())
    share = unmodelled / total_instr if total_instr else 0.0
    cycles = sum(per_op)
    stream = stream_core or cpu
    if core.stand_in and stream != cpu:
        notes.append(f"QEMU has no {cpu}: estimated on the {stream} instruction stream (same Armv8.1-M + MVE code) "
                     f"with {cpu} timings")
    err = (fit.get("error_pct") or {}).get(cpu)
    basis = fit.get("error_basis", "")
    basis = basis.get(cpu, "") if isinstance(basis, dict) else basis
    if err is None:
        basis = "not validated on published measurements for this core"
    return Estimate(cpu, stream, board or "", float(clock), clock_source, ws, ws_source, par.stall_per_load,
                    cycles, cycles / (float(clock) * 1e3), per_op, unmodelled, share, share > LOW_CONFIDENCE,
                    err, basis, notes)


def timing_board(cpu: str, board: str | None) -> tuple[str, str, str]:
    """(timing core, board of mcus.json, note): a simulated board or none -> the core's default MCU board;
    an M85 board on the M55 stream -> the M85 table."""
    from backend_core.common.boards.specs import board_named

    core = cpu
    if board:
        try:
            spec = board_named(board)
        except BadInputError:
            spec = None
        if spec is not None and not spec.simulated:
            if spec.core != cpu:
                table = core_timing(spec.core)
                if table.stand_in == cpu:
                    core = spec.core
            return core, spec.name, ""
    default = _default_board(cpu)
    return core, default, (f"no MCU board given (--board): estimated for {default}, the {cpu}'s reference board"
                           if default else "")


def _default_board(cpu: str) -> str:
    import json

    from backend_core.target.timing.model import TIMING_DIR

    path = TIMING_DIR / f"{cpu}.json"
    return json.loads(path.read_text()).get("default_board", "") if path.is_file() else ""


def check_request(cpu: str, board: str | None, clock_mhz: float | None, flash_wait_states: int | None) -> None:
    """Before any work: BadInputError (exit 2) for --clock-mhz / --flash-wait-states that cannot be used
    (no timing table for the core, a clock outside its range, negative wait states)."""
    if clock_mhz is None and flash_wait_states is None:
        return
    core, name, _ = timing_board(cpu, board)
    table = core_timing(core)
    if flash_wait_states is not None and flash_wait_states < 0:
        raise BadInputError(f"--flash-wait-states {flash_wait_states} is negative.", "Pass 0 or more.")
    if clock_mhz is not None:
        check_clock(table, clock_mhz)
