"""QEMU's `-d in_asm,exec,nochain` log -> instructions executed by class, between any two tick reads.

Why this road (measured, bench/class_counting.py): QEMU 7.2 here ships no TCG plugin, and `-d exec` with
`nochain` logs every translation block (TB) it runs, `in_asm` which addresses each TB holds (once, when it
is translated). With the ELF's disassembly (isa.py) that is the executed instruction stream by class. A
TB that ends in a branch and is followed by a TB at its fall-through address did not take it.

Ops are found the way the ETDump profile finds them: every ETDump timestamp is a call of the board's
`__wrap_et_pal_current_ticks` (kernels/common/ticks.c, instructions under -icount), so the i-th timestamp
is the trace position of a call of that function plus one constant (the instructions from its entry to
the SysTick read). `count_between(t0, t1)` gives the classes of the instructions between two timestamps;
they sum to t1 - t0 when the alignment holds (`drift`)."""
from __future__ import annotations

import ctypes
import os
import threading
import time
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from backend_core.target.timing.isa import CLASSES, INDEX, Insn

TRACE_FLAGS = "in_asm,exec,nochain"
TICKS_SYMBOL = "__wrap_et_pal_current_ticks"


def trace_args(log: str | Path) -> list[str]:
    """The qemu-system-arm arguments that write the log this module reads."""
    return ["-d", TRACE_FLAGS, "-D", str(log)]


@dataclass
class ClassTrace:
    """The executed stream, compressed: each TB variant (TB, branch taken or not) has a class vector."""

    vectors: np.ndarray                 # (variants, len(CLASSES)) instruction counts
    sequence: np.ndarray                # variant index per executed TB, in order
    starts: np.ndarray                  # instruction position of each executed TB's first instruction
    reads: np.ndarray                   # positions (instructions) of each call of the ticks function
    offset: int = 0                     # ETDump timestamp - trace position of the same read
    unknown_addresses: int = 0          # executed instructions the ELF's disassembly has no entry for
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return int(self.vectors[self.sequence].sum()) if len(self.sequence) else 0

    def totals(self) -> dict[str, int]:
        return _named(self.vectors[self.sequence].sum(axis=0)) if len(self.sequence) else _named(None)

    def align(self, timestamps: list[int]) -> int:
        """Find and keep the constant that maps ETDump timestamps onto read positions; returns how many
        timestamps matched a read exactly."""
        ts = sorted(set(timestamps))
        if not ts or not len(self.reads):
            return 0
        reads = set(int(r) for r in self.reads)
        best, best_hits = 0, -1
        for r in self.reads[:64]:
            d = ts[0] - int(r)
            hits = sum(1 for t in ts if t - d in reads)
            if hits > best_hits:
                best, best_hits = d, hits
        self.offset = best
        return best_hits

    def _index(self, timestamp: int) -> int:
        """The executed-TB index of the read at `timestamp` (the nearest read)."""
        pos = timestamp - self.offset
        i = bisect_left(self.reads, pos)
        cands = [j for j in (i - 1, i) if 0 <= j < len(self.reads)]
        r = min((int(self.reads[j]) for j in cands), key=lambda x: abs(x - pos))
        return int(np.searchsorted(self.starts, r))

    def count_between(self, t0: int, t1: int) -> dict[str, int]:
        """Instructions by class from the read at timestamp t0 up to the read at t1."""
        a, b = self._index(t0), self._index(t1)
        if b <= a:
            return _named(None)
        n = np.bincount(self.sequence[a:b], minlength=len(self.vectors))
        return _named(n @ self.vectors)


def _named(vec) -> dict[str, int]:
    return {c: (0 if vec is None else int(vec[i])) for i, c in enumerate(CLASSES)}


def _vector(addrs: list[int], insns: dict[int, Insn], taken: bool) -> tuple[list[int], int]:
    v = [0] * len(CLASSES)
    unknown = 0
    for k, a in enumerate(addrs):
        ins = insns.get(a)
        if ins is None:
            v[INDEX["unmodelled"]] += 1
            unknown += 1
            continue
        cls = ins.cls
        if cls == "branch_taken" and k == len(addrs) - 1 and not taken:
            cls = "branch_not_taken"
        v[INDEX[cls]] += 1
    return v, unknown


CHUNK = 1 << 22


@dataclass
class RawTrace:
    """The log as parsed, before the ELF's disassembly is applied: executed TB ids in order, and per TB id
    its start pc and guest byte range (from its in_asm block; None: never seen translated)."""

    seq: array = field(default_factory=lambda: array("i"))
    tb_pc: list[int] = field(default_factory=list)
    tb_range: list[tuple[int, int] | None] = field(default_factory=list)
    cut: dict[int, tuple[int, int]] = field(default_factory=dict)   # part id -> (whole id, cut address)


class _Parser:
    """Lines of the log -> RawTrace. An exec line of a TB seen before is byte-identical to its first one
    (host pointer, pc, flags, symbol), so the whole line is the dict key: ~97 % of ds_cnn's lines cost
    one dict look-up and an append; only new TBs, in_asm blocks, rewinds and stops are parsed."""

    def __init__(self) -> None:
        self.raw = RawTrace()
        self.ids: dict[bytes, int] = {}
        self.pending: tuple[int, int] | None = None      # (first address, end address) of the last IN: block
        self.in_block = False

    def feed(self, text: bytes) -> None:
        """A run of whole lines."""
        get, add = self.ids.get, self.raw.seq.append
        for line in text.split(b"\n"):
            i = get(line)
            if i is not None and self.pending is None:
                add(i)
            else:
                self._slow(line, i)

    def _slow(self, line: bytes, known: int | None) -> None:
        raw, c = self.raw, line[:1]
        if c == b"T" and line.startswith(b"Trace "):
            self.in_block = False
            i = known
            if i is None:
                head = line.split(b" ", 4)
                i = self.ids[line] = len(raw.tb_pc)
                raw.tb_pc.append(int(head[3].split(b"/")[1], 16))
                raw.tb_range.append(None)
            if self.pending is not None and self.pending[0] == raw.tb_pc[i]:
                raw.tb_range[i] = self.pending
                self.pending = None
            raw.seq.append(i)
        elif c == b"I" and line.startswith(b"IN:"):
            self.in_block, self.pending = True, None
        elif c == b"0" and self.in_block and line.startswith(b"0x"):
            addr, _, rest = line.partition(b":")
            a = int(addr[2:], 16)
            words = rest.split()
            n = 4 if len(words) > 1 and len(words[0]) == 4 and len(words[1]) == 4 and all(
                ch in b"0123456789abcdef" for ch in words[1]) else 2
            self.pending = (a, a + n) if self.pending is None else (self.pending[0], a + n)
        elif c == b"c" and line.startswith(b"cpu_io_recompile: rewound") and raw.seq:
            # the TB ran up to an I/O instruction, was undone from there and goes on in a new TB
            cut = int(line.rsplit(b" ", 1)[1], 16)
            whole = raw.seq[-1]
            key = b"%d@%x" % (whole, cut)
            part = self.ids.get(key)
            if part is None:
                part = self.ids[key] = len(raw.tb_pc)
                raw.tb_pc.append(raw.tb_pc[whole])
                raw.tb_range.append(None)
                raw.cut[part] = (whole, cut)
            raw.seq[-1] = part
        elif c == b"S" and line.startswith(b"Stopped execution of TB chain") and raw.seq:
            raw.seq.pop()                    # exited at its head (an interrupt, the icount budget): not run


def parse_log(log: str | Path) -> RawTrace:
    """Parse a finished log (or a pipe), streamed in 4 MB chunks of whole lines."""
    parser = _Parser()
    carry = b""
    with open(log, "rb") as fh:
        while True:
            data = fh.read(CHUNK)
            if not data:
                break
            carry = _feed_lines(parser, carry + data)
    _feed_rest(parser, carry)
    return parser.raw


def _feed_lines(parser: _Parser, data: bytes) -> bytes:
    """Feed the whole lines of `data`; returns the unfinished last line."""
    cut = data.rfind(b"\n")
    if cut < 0:
        return data
    parser.feed(data[:cut + 1])
    return data[cut + 1:]


def _feed_rest(parser: _Parser, carry: bytes) -> None:
    if carry:
        parser.feed(carry if carry.endswith(b"\n") else carry + b"\n")


POLL_S = 0.01                           # the follower's wait at the end of what QEMU has written so far
PUNCH = 1 << 22                         # bytes read before the follower frees them (tmpfs: RAM)


def follow_log(log: str | Path, done: threading.Event) -> RawTrace:
    """Parse a log while QEMU appends to it, to the end once `done` is set (QEMU has exited). Measured on
    ds_cnn M4 (bench/cycle_runs.py): a regular file followed this way costs the reader 0.13 s of CPU
    against 0.36 s through a named pipe (one read and one wake-up per line QEMU flushes), and QEMU never
    waits on the reader. What was read is freed (fallocate PUNCH_HOLE), so a multi-GB log (mv2) never
    sits in the file system whole; where the file system cannot, the file only grows until it is deleted."""
    parser, carry = _Parser(), b""
    try:
        fd = os.open(log, os.O_RDWR)            # punching a hole needs the file open for writing
    except PermissionError:
        fd = os.open(log, os.O_RDONLY)
    read_to = freed = 0
    try:
        while True:
            data = os.read(fd, CHUNK)
            if not data:
                if not done.is_set():
                    time.sleep(POLL_S)
                    continue
                data = os.read(fd, CHUNK)       # what QEMU wrote between the last read and its exit
                if not data:
                    break
            read_to += len(data)
            carry = _feed_lines(parser, carry + data)
            if read_to - freed >= PUNCH:
                freed = _punch(fd, freed, read_to & ~(PUNCH - 1))
    finally:
        os.close(fd)
    _feed_rest(parser, carry)
    return parser.raw


def _punch(fd: int, start: int, end: int) -> int:
    """Free [start, end) of the file (its size is kept); returns the new freed offset."""
    if end <= start or _fallocate is None:
        return start
    if _fallocate(fd, 3, start, end - start) != 0:      # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
        return start
    return end


def _libc_fallocate() -> Any:
    try:
        f = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return None
    f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    f.restype = ctypes.c_int
    return f


_fallocate = _libc_fallocate()


def read_trace(log: str | Path, insns: dict[int, Insn], ticks_pc: int | None) -> ClassTrace:
    """Parse a finished log (ds_cnn's is ~50 MB, mv2's a few GB) into a ClassTrace."""
    return build_trace(parse_log(log), insns, ticks_pc)


def build_trace(raw: RawTrace, insns: dict[int, Insn], ticks_pc: int | None) -> ClassTrace:
    """A parsed log + the ELF's disassembly -> the ClassTrace (each distinct TB classified once)."""
    order = sorted(insns)
    tb_addrs: list[list[int] | None] = [None if r is None else _span(order, r[0], r[1]) for r in raw.tb_range]
    for part, (whole, cut) in sorted(raw.cut.items()):
        tb_addrs[part] = [x for x in (tb_addrs[whole] or []) if x < cut]
    seq = np.frombuffer(raw.seq, dtype=np.int32) if len(raw.seq) else np.zeros(0, dtype=np.int32)
    pcs = (np.asarray(raw.tb_pc, dtype=np.uint32)[seq] if len(seq) else np.zeros(0, dtype=np.uint32))
    return _compress(seq, pcs, tb_addrs, insns, ticks_pc)


def _span(order: list[int], start: int, end: int) -> list[int]:
    """The ELF's instruction addresses in [start, end): QEMU's capstone splits a 32-bit Armv8.1-M
    instruction (`le`, MVE) in two, so only the block's byte range is taken from its log."""
    i = bisect_left(order, start)
    out = []
    while i < len(order) and order[i] < end:
        out.append(order[i])
        i += 1
    return out or [start]


def _compress(seq: np.ndarray, pcs: np.ndarray, tb_addrs: list[list[int] | None], insns: dict[int, Insn],
              ticks_pc: int | None) -> ClassTrace:
    """Executed TBs -> variants (TB, its last branch taken or not) with one class vector each."""
    n_tb = len(tb_addrs)
    fallthrough = np.full(max(n_tb, 1), -1, dtype=np.int64)     # -1: the TB does not end in a conditional
    for i, addrs in enumerate(tb_addrs):
        last = insns.get(addrs[-1]) if addrs else None
        if addrs and last is not None and last.conditional:
            fallthrough[i] = addrs[-1] + last.size
    taken = np.ones(len(seq), dtype=bool)
    if len(seq) > 1:
        ft = fallthrough[seq[:-1]]
        taken[:-1] = (ft < 0) | (pcs[1:].astype(np.int64) != ft)
    keys = seq.astype(np.int64) * 2 + taken
    uniq, inverse = np.unique(keys, return_inverse=True)
    vectors, unknown = [], []
    missing = 0
    for key in uniq.tolist():
        addrs = tb_addrs[key // 2]
        if addrs is None:
            missing += 1
        vec, unk = _vector(addrs or [], insns, bool(key % 2))
        vectors.append(vec)
        unknown.append(unk)
    vec_arr = np.array(vectors or [[0] * len(CLASSES)], dtype=np.int64)
    variant = inverse.astype(np.int32).reshape(-1)
    lens = vec_arr.sum(axis=1)[variant] if len(seq) else np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lens)[:-1])) if len(seq) else np.zeros(0, dtype=np.int64)
    # a block rewound at its first instruction and its re-run start at the same position: one call
    reads = np.unique(starts[pcs == ticks_pc]) if ticks_pc is not None else np.zeros(0, dtype=np.int64)
    unknown_n = int(np.array(unknown or [0], dtype=np.int64)[variant].sum()) if len(seq) else 0
    tr = ClassTrace(vec_arr, variant, starts, reads, unknown_addresses=unknown_n)
    if missing:
        tr.notes.append(f"{missing} executed TB(s) had no in_asm block in the log (counted as 0 instructions)")
    return tr
