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

from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path

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


def read_trace(log: str | Path, insns: dict[int, Insn], ticks_pc: int | None) -> ClassTrace:
    """Parse the log (streamed: ds_cnn's is ~100 MB, mv2's a few GB) into a ClassTrace."""
    ids: dict[str, int] = {}                 # a TB's name (host pointer, "@cut" when rewound) -> id
    tb_addrs: list[list[int] | None] = []    # id -> its guest addresses (None: never seen translated)
    order = sorted(insns)
    pending: list[int] = []                  # [first address, end address] of the last IN: block
    in_block = False
    seq, pcs = array("i"), array("I")

    def tb_id(name: str) -> int:
        i = ids.get(name)
        if i is None:
            i = ids[name] = len(tb_addrs)
            tb_addrs.append(None)
        return i

    with open(log, "r", errors="replace") as fh:
        for line in fh:
            c = line[0] if line else ""
            if c == "T" and line.startswith("Trace "):
                in_block = False
                parts = line.split()
                i = tb_id(parts[2])
                pc = int(parts[3].split("/")[1], 16)
                if pending and pending[0] == pc:
                    tb_addrs[i] = _span(order, pending[0], pending[1])
                    pending = []
                seq.append(i)
                pcs.append(pc)
            elif c == "I" and line.startswith("IN:"):
                in_block, pending = True, []
            elif c == "c" and line.startswith("cpu_io_recompile: rewound") and seq:
                # the TB ran up to an I/O instruction, was undone from there and goes on in a new TB
                cut = int(line.rsplit(" ", 1)[1], 16)
                whole = seq[-1]
                part = tb_id(f"{whole}@{cut:x}")
                if tb_addrs[part] is None:
                    tb_addrs[part] = [x for x in (tb_addrs[whole] or []) if x < cut]
                seq[-1] = part
            elif c == "S" and line.startswith("Stopped execution of TB chain") and seq:
                seq.pop()                    # exited at its head (an interrupt, the icount budget): not run
                pcs.pop()
            elif in_block and c == "0" and line.startswith("0x"):
                addr, _, rest = line.partition(":")
                a = int(addr[2:], 16)
                words = rest.split()
                nbytes = 4 if len(words) > 1 and len(words[1]) == 4 and all(
                    ch in "0123456789abcdef" for ch in words[1]) and len(words[0]) == 4 else 2
                if not pending:
                    pending = [a, a + nbytes]
                else:
                    pending[1] = a + nbytes
    return _compress(np.frombuffer(seq, dtype=np.int32) if seq else np.zeros(0, dtype=np.int32),
                     np.frombuffer(pcs, dtype=np.uint32) if pcs else np.zeros(0, dtype=np.uint32),
                     tb_addrs, insns, ticks_pc)


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
