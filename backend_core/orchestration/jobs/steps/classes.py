"""Instructions by class per op: the QEMU block log of a profiled run + the runner ELF's disassembly
(backend_core.target.timing) on the profile's rows, and the cycle estimate on top. Failures are reported
on the run (profile notes), never raised: the run and its profile already happened."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from backend_core.target.timing.isa import disassemble, symbol_address
from backend_core.target.timing.trace import TICKS_SYMBOL, ClassTrace, read_trace

TRACE_LOG = "qemu-exec.log"


def class_trace(log: Path, elf: Path, cpu: str) -> ClassTrace:
    """The run's executed stream by class (parse ~1 s per million blocks)."""
    insns = disassemble(elf, cpu)
    return read_trace(log, insns, symbol_address(elf, TICKS_SYMBOL))


def attach_classes(run: Any, emit: Callable[[str, str], None], *, board: str | None = None,
                   clock_mhz: float | None = None, flash_wait_states: int | None = None,
                   keep_log: bool = False) -> None:
    """Set each profile row's `classes` (instructions by class between the row's own ETDump timestamps)
    and the profile's cycle estimate on `board`; the log (~100 MB for ds_cnn) is deleted unless `keep_log`."""
    log = run.files.get(TRACE_LOG)
    prof = run.profile
    if log is None or prof is None:
        return
    start = time.monotonic()
    try:
        tr = class_trace(log, run.elf, run.target)
        stamps = [t for o in prof.ops if o.span for t in o.span]
        hits = tr.align(stamps)
        worst, off = 0, 0
        for o in prof.ops:
            if o.span:
                o.classes = tr.count_between(o.span[0], o.span[1])
                d = abs(sum(o.classes.values()) - o.count)
                off += d > 0
                worst = max(worst, d / max(o.count, 1))
        if hits < len(set(stamps)) or off:
            prof.notes.append(f"instruction classes: {len(set(stamps)) - hits} ETDump timestamp(s) matched no "
                              f"tick read of the QEMU log exactly (the nearest read is used); {off} op(s) differ "
                              f"from their -icount count, by up to {worst:.4%}")
        prof.notes.extend(f"instruction classes: {n}" for n in tr.notes)
        attach_estimate(prof, run.target, board, clock_mhz, flash_wait_states)
    except Exception as exc:  # noqa: BLE001  a broken log must not lose the profile
        prof.notes.append(f"instruction classes: none ({type(exc).__name__}: {exc})")
    finally:
        if not keep_log:
            Path(log).unlink(missing_ok=True)
            run.files.pop(TRACE_LOG, None)
    run.timings["classes_s"] = time.monotonic() - start
    emit("cmlens", f"instruction classes: {time.monotonic() - start:.1f} s")


def attach_estimate(prof: Any, cpu: str, board: str | None, clock_mhz: float | None,
                    flash_wait_states: int | None) -> None:
    """profile.estimate from the rows' classes (a core with no timing table: a note, no estimate)."""
    from backend_core.common.errors import BadInputError
    from backend_core.target.timing.estimate import estimate, timing_board

    try:
        core, name, note = timing_board(cpu, board)
        est = estimate([o.classes for o in prof.ops], core, name, clock_mhz=clock_mhz,
                       flash_wait_states=flash_wait_states, stream_core=cpu)
    except BadInputError as exc:
        prof.notes.append(f"no cycle estimate: {exc.args[0] if exc.args else exc}")
        return
    if note:
        est.notes.insert(0, note)
    prof.estimate = est.to_dict()
