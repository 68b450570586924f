"""The timing classes of instructions as binutils' objdump writes them (the ELF's disassembly)."""
from __future__ import annotations

import pytest

from backend_core.target.timing.isa import CLASSES, classify


@pytest.mark.parametrize("mnemonic, ops, cls, cond", [
    ("smlad", "r0, r1, r2, r0", "mac_simd", False),
    ("sxtab16", "r3, r4, r5", "mac_simd", False),
    ("mla", "r0, r1, r2, r3", "mac_simd", False),
    ("ldr.w", "r4, [r2, #3332]", "load", False),
    ("ldmia.w", "sp!, {r4, r5, pc}", "branch_taken", False),
    ("pop", "{r4, pc}", "branch_taken", False),
    ("pop", "{r4, r5}", "load", False),
    ("strd", "r2, r3, [sp]", "store", False),
    ("beq.n", "7000024c <f+0x1dc>", "branch_taken", True),
    ("cbnz", "r0, 70006d4c <f+0x78>", "branch_taken", True),
    ("b.n", "700007c0 <f>", "branch_taken", False),
    ("le", "lr, 7000701e <f+0x32>", "branch_taken", True),
    ("letp", "lr, 7000701e <f+0x32>", "branch_taken", True),
    ("dls", "lr, r2", "alu", False),
    ("wlstp.8", "lr, r2, 70001000 <f>", "branch_taken", True),
    ("vldrb.s16", "q0, [r0], #8", "mve_load", False),
    ("vstrb.8", "q1, [r1]", "mve_store", False),
    ("vmladava.s8", "r0, q1, q2", "mve", False),
    ("vdup.32", "q7, r3", "mve", False),
    ("vldr", "d8, [lr]", "load", False),
    ("vmul.f32", "s0, s1, s2", "fp", False),
    ("sdiv", "r0, r1, r2", "div", False),
    ("vdiv.f64", "d0, d1, d2", "div", False),
    ("adds", "r2, #4", "alu", False),
    ("sqrshr", "r0, r1", "alu", False),
    (".word", "0x12345678", "unmodelled", False),
    ("udf", "#255", "unmodelled", False),
    ("frobnicate", "r0", "unmodelled", False),
])
def test_classify(mnemonic: str, ops: str, cls: str, cond: bool) -> None:
    assert cls in CLASSES
    assert classify(mnemonic, ops) == (cls, cond)
