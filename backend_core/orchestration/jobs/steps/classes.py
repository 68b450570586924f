"""Instructions by class per op: the QEMU block log of a profiled run + the runner ELF's disassembly
(backend_core.target.timing) on the profile's rows, and the cycle estimate on top. Failures are reported
on the run (profile notes), never raised: the run and its profile already happened."""
from __future__ import annotations

import os
import uuid
import threading
import time
from pathlib import Path
from typing import Any, Callable

from backend_core.target.timing.isa import disassembly, symbol_address
from backend_core.target.timing.trace import TICKS_SYMBOL, ClassTrace, build_trace, follow_log, parse_log

TRACE_LOG = "qemu-exec.log"


def _disassembly(elf: Path, cpu: str, found: dict[str, Any]) -> None:
    try:
        found["insns"] = disassembly(elf, cpu)
        found["ticks"] = symbol_address(elf, TICKS_SYMBOL)
    except Exception as exc:  # noqa: BLE001  raised in the reader's thread
        found["error"] = exc


def class_trace(log: Path, elf: Path, cpu: str, done: threading.Event | None = None) -> ClassTrace:
    """The run's executed stream by class. The log is read from its start (followed while QEMU writes it
    until `done` is set; None: a finished file), the ELF's disassembly (cached per ELF) made beside it."""
    found: dict[str, Any] = {}
    side = threading.Thread(target=_disassembly, args=(elf, cpu, found), daemon=True)
    side.start()
    raw = parse_log(log) if done is None else follow_log(log, done)
    side.join()
    if "error" in found:
        raise found["error"]
    return build_trace(raw, found["insns"], found["ticks"])


def trace_log_path(workdir: Path) -> Path:
    """Where QEMU writes its block log: a new file in /dev/shm (RAM: its writes cost QEMU the least, and the
    reader frees what it has read) when that is a writable folder, else the run's folder."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        name = shm / f"cmlens-qemu-exec-{os.getpid()}-{uuid.uuid4().hex[:12]}.log"
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))   # a log of ours, nobody else's
        return name
    return Path(workdir) / TRACE_LOG


class TraceReader:
    """Parses QEMU's block log while QEMU writes it: a regular file followed to its end (trace.follow_log),
    so the parse overlaps the run and QEMU never waits on the reader. finish() (after QEMU exited) reads
    the rest, deletes the file and always returns."""

    def __init__(self, log: Path, elf: Path, cpu: str) -> None:
        self.log = Path(log)
        self.log.write_bytes(b"")             # exists before QEMU opens it ("w": it starts from 0 too)
        self.trace: ClassTrace | None = None
        self.error = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(elf, cpu), daemon=True)
        self._thread.start()

    def _read(self, elf: Path, cpu: str) -> None:
        try:
            self.trace = class_trace(self.log, elf, cpu, self._done)
        except Exception as exc:  # noqa: BLE001  reported on the profile, never raised
            self.error = f"{type(exc).__name__}: {exc}"

    def finish(self, timeout: float = 600.0) -> tuple[ClassTrace | None, str, float]:
        """(the trace or None, why not, seconds waited after the run)."""
        start = time.monotonic()
        self._done.set()
        self._thread.join(timeout)
        self.log.unlink(missing_ok=True)
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


def store_profile(run: Any, program: Path, made: dict[str, Any], emit: Callable[[str, str], None]) -> None:
    """Keep a profile with classes under its program and CPU (target/profile/store.py): `cmlens profile
    --board` and the bundle's report estimate from it without a checkout. A failure is a note, never raised."""
    from backend_core.target.build.ops import program_bytes
    from backend_core.target.profile.store import ProfileStore, program_key

    prof = run.profile
    if prof is None or not any(o.classes for o in prof.ops):
        return
    try:
        path = ProfileStore().put(program_key(program_bytes(Path(program).read_bytes())), prof, made)
    except Exception as exc:  # noqa: BLE001  the run and its profile are already made
        prof.notes.append(f"profile not cached ({type(exc).__name__}: {exc})")
        return
    if path is not None:
        emit("cmlens", f"profile cached: {path}")


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
