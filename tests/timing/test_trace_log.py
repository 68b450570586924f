"""QEMU 7.2's `-d in_asm,exec,nochain` log, in the exact line formats it writes (copied from a real
ds_cnn run's log): blocks by class, taken/not-taken branches, a block rewound at an I/O instruction, a
block stopped at its head, and the split of the stream at the tick function's calls."""
from __future__ import annotations

from pathlib import Path

from backend_core.target.timing.isa import Insn
from backend_core.target.timing.trace import read_trace

# 0x100: ticks function (2 insns, the first a load); 0x200: a loop body ending in a conditional branch
INSNS = {
    0x100: Insn(2, "ldr", "load", False), 0x102: Insn(2, "bx", "branch_taken", False),
    0x200: Insn(4, "smlad", "mac_simd", False), 0x204: Insn(2, "adds", "alu", False),
    0x206: Insn(2, "bne.n", "branch_taken", True), 0x208: Insn(4, "bl", "branch_taken", False),
}
LOG = """----------------
IN: ticks
0x00000100:  6818       ldr      r0, [r3]
0x00000102:  4770       bx       lr

Trace 0: 0x7f0000000100 [0080044a/00000100/00000150/ff020200] ticks
cpu_io_recompile: rewound execution of TB to 00000100
----------------
IN: ticks
0x00000100:  6818       ldr      r0, [r3]

Trace 0: 0x7f0000000200 [0080044a/00000100/00000150/ff038201] ticks
----------------
IN: ticks
0x00000102:  4770       bx       lr

Trace 0: 0x7f0000000300 [0080044a/00000102/00000150/ff020200] ticks
----------------
IN: loop
0x00000200:  fb21 0002  smlad    r0, r1, r2, r0
0x00000204:  3001       adds     r0, #1
0x00000206:  d1fb       bne      #0x200

Trace 0: 0x7f0000000400 [0080044a/00000200/00000150/ff020200] loop
Trace 0: 0x7f0000000400 [0080044a/00000200/00000150/ff020200] loop
Trace 0: 0x7f0000000400 [0080044a/00000200/00000150/ff020200] loop
Stopped execution of TB chain before 0x7f0000000400 [00000200] loop
Trace 0: 0x7f0000000400 [0080044a/00000200/00000150/ff020200] loop
----------------
IN: after
0x00000208:  f000 f800  bl       #0x100

Trace 0: 0x7f0000000500 [0080044a/00000208/00000150/ff020200] after
Trace 0: 0x7f0000000200 [0080044a/00000100/00000150/ff038201] ticks
Trace 0: 0x7f0000000300 [0080044a/00000102/00000150/ff020200] ticks
"""


def test_blocks_by_class_with_rewinds_stops_and_branches(tmp_path: Path) -> None:
    log = tmp_path / "qemu-exec.log"
    log.write_text(LOG)
    tr = read_trace(log, INSNS, 0x100)
    # rewound block ran nothing; 3 loop blocks ran (one was stopped at its head): the last falls through
    assert tr.totals() == {**{k: 0 for k in tr.totals()}, "load": 2, "branch_taken": 2 + 2 + 1,
                           "mac_simd": 3, "alu": 3, "branch_not_taken": 1}
    assert tr.total == 14 and tr.notes == []
    assert list(tr.reads) == [0, 12]           # the tick function's entries, in instructions
    assert tr.align([1000, 1012]) == 2 and tr.offset == 1000
    between = tr.count_between(1000, 1012)
    assert sum(between.values()) == 12 and between["mac_simd"] == 3 and between["branch_not_taken"] == 1
