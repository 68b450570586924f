"""Instructions by class per op: the QEMU block log of a profiled run + the runner ELF's disassembly
(backend_core.target.timing) on the profile's rows, and the cycle estimate on top. Failures are reported
on the run (profile notes), never raised: the run and its profile already happened."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from backend_core.target.timing.isa import disassembly, symbol_address
from backend_core.target.timing.trace import TICKS_SYMBOL, ClassTrace, build_trace, parse_log

TRACE_LOG = "qemu-exec.log"


def class_trace(log: Path, elf: Path, cpu: str) -> ClassTrace:
    """The run's executed stream by class. The log is read from the start (QEMU blocks on opening the
    pipe until a reader has), the ELF's disassembly (cached per ELF) is made beside it in a thread."""
    found: dict[str, Any] = {}

    def elf_side() -> None:
        try:
            found["insns"] = disassembly(elf, cpu)
            found["ticks"] = symbol_address(elf, TICKS_SYMBOL)
        except Exception as exc:  # noqa: BLE001  raised below, in the reader's thread
            found["error"] = exc

    side = threading.Thread(target=elf_side, daemon=True)
    side.start()
    raw = parse_log(log)
    side.join()
    if "error" in found:
        raise found["error"]
    return build_trace(raw, found["insns"], found["ticks"])


class TraceReader:
    """Parses QEMU's block log while QEMU writes it, through a named pipe: no multi-GB file on disk (mv2's
    log is ~4 GB), and the parse overlaps the run. finish() always returns: if QEMU never opened the
    pipe, it opens the writing end itself so the reader sees an empty log."""

    def __init__(self, fifo: Path, elf: Path, cpu: str) -> None:
        self.fifo = Path(fifo)
        self.fifo.unlink(missing_ok=True)
        os.mkfifo(self.fifo)
        self.trace: ClassTrace | None = None
        self.error = ""
        self._thread = threading.Thread(target=self._read, args=(elf, cpu), daemon=True)
        self._thread.start()

    def _read(self, elf: Path, cpu: str) -> None:
        try:
            self.trace = class_trace(self.fifo, elf, cpu)
        except Exception as exc:  # noqa: BLE001  reported on the profile, never raised
            self.error = f"{type(exc).__name__}: {exc}"

    def finish(self, timeout: float = 600.0) -> tuple[ClassTrace | None, str, float]:
        """(the trace or None, why not, seconds waited after the run)."""
        start = time.monotonic()
        self._thread.join(0.5)
        if self._thread.is_alive():
            try:                                  # unblock a reader still waiting for QEMU to open the pipe
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            self._thread.join(timeout)
        self.fifo.unlink(missing_ok=True)
        if self._thread.is_alive():
            return None, f"the log reader did not finish within {timeout:g} s", time.monotonic() - start
        return self.trace, self.error, time.monotonic() - start


def attach_classes(run: Any, emit: Callable[[str, str], None], trace: tuple | None, *, board: str | None = None,
                   clock_mhz: float | None = None, flash_wait_states: int | None = None) -> None:
    """Set each profile row's `classes` (instructions by class between the row's own ETDump timestamps)
    and the profile's cycle estimate on `board`. `trace`: TraceReader.finish()'s answer."""
    prof = run.profile
    if trace is None or prof is None:
        return
    tr, why, waited = trace
    run.timings["classes_s"] = waited
    if tr is None:
        prof.notes.append(f"instruction classes: none ({why or 'no QEMU block log'})")
        return
    try:
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
    emit("cmlens", f"instruction classes: log parsed alongside the run, {waited:.1f} s after it")


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
