"""Cortex-M fault reports found in UART output, with the fault status registers decoded into the
reasons a user can act on. Two formats:

- kernels/ board layer (include/cmlens/fault.h), one line:
  `CMLENS FAULT: BusFault cfsr=0x00008200 hfsr=0x00000000 mmfar=0x... bfar=0xf0000000 pc=0x... lr=0x...
  xpsr=0x... sp=0x... exc_return=0x...`
- Arm Ethos-U core_platform (ExecuTorch's stock FVP flow), two lines:
  `Hard fault. irq=-13, pc=0x..., lr=0x..., xpsr=0x..., sp=0x...` then `cfsr=0x... bfar=0x... mmfar=0x...`
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_CMLENS = re.compile(r"CMLENS FAULT: (\w+)((?:\s+\w+=0x[0-9a-fA-F]+)+)")
_ETHOSU = re.compile(r"Hard fault\. irq=(-?\d+),\s*pc=0x([0-9a-fA-F]+),\s*lr=0x([0-9a-fA-F]+),"
                     r"\s*xpsr=0x([0-9a-fA-F]+),\s*sp=0x([0-9a-fA-F]+)")
_REG = re.compile(r"(\w+)=0x([0-9a-fA-F]+)")
_ETHOSU_REGS = re.compile(r"^\s*cfsr=0x[0-9a-fA-F]+")

# Configurable Fault Status Register bits (Armv7-M / Armv8-M ARM).
CFSR_BITS: dict[int, tuple[str, str]] = {
    0: ("IACCVIOL", "instruction fetch from a region the MPU forbids (execute-never?)"),
    1: ("DACCVIOL", "data access to a region the MPU forbids"),
    3: ("MUNSTKERR", "MPU fault while unstacking an exception"),
    4: ("MSTKERR", "MPU fault while stacking an exception (stack overflow?)"),
    5: ("MLSPERR", "MPU fault during lazy FP state save"),
    7: ("MMARVALID", "MMFAR holds the faulting address"),
    8: ("IBUSERR", "bus error on instruction fetch (jump to an unmapped address?)"),
    9: ("PRECISERR", "precise bus error: a load/store to an address no device answers"),
    10: ("IMPRECISERR", "imprecise bus error (a buffered write failed; the PC is after the store)"),
    11: ("UNSTKERR", "bus error while unstacking an exception"),
    12: ("STKERR", "bus error while stacking an exception (stack outside RAM: stack overflow?)"),
    13: ("LSPERR", "bus error during lazy FP state save"),
    15: ("BFARVALID", "BFAR holds the faulting address"),
    16: ("UNDEFINSTR", "undefined instruction (code built for another CPU, or corrupt code)"),
    17: ("INVSTATE", "invalid state: branch to an address without the Thumb bit (corrupt function pointer?)"),
    18: ("INVPC", "invalid EXC_RETURN on exception return (stack corruption?)"),
    19: ("NOCP", "FPU/MVE instruction while the coprocessor is disabled in CPACR"),
    20: ("STKOF", "stack overflow: the stack pointer went below its limit (MSPLIM/PSPLIM)"),
    24: ("UNALIGNED", "unaligned access with unaligned trapping enabled"),
    25: ("DIVBYZERO", "integer division by zero with trapping enabled"),
}
HFSR_BITS: dict[int, tuple[str, str]] = {
    1: ("VECTTBL", "bus error reading the vector table"),
    30: ("FORCED", "a configurable fault escalated to HardFault (handler disabled or fault in a handler)"),
    31: ("DEBUGEVT", "debug event (BKPT without a debugger: semihosting call with semihosting off?)"),
}
# Exception numbers for Ethos-U's "irq=" (IPSR - 16).
_EXC_NAMES = {-13: "HardFault", -12: "MemManage", -11: "BusFault", -10: "UsageFault", -9: "SecureFault"}


@dataclass
class FaultReport:
    """One fault: its kind, the raw registers, the decoded flags and plain-language reasons."""

    kind: str                                   # HardFault, BusFault, UsageFault, ...
    source: str                                 # "cmlens" or "ethos-u"
    registers: dict[str, int] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    line_no: int = 0

    def add_registers(self, regs: dict[str, int]) -> None:
        self.registers.update(regs)
        self.flags, self.reasons = decode(self.registers)

    @property
    def address(self) -> int | None:
        """The faulting data address when the hardware recorded one (BFAR / MMFAR valid)."""
        cfsr = self.registers.get("cfsr", 0)
        if cfsr & (1 << 15):
            return self.registers.get("bfar")
        if cfsr & (1 << 7):
            return self.registers.get("mmfar")
        return None

    def summary(self) -> str:
        """`BusFault at pc=0x70000704: precise bus error ... (address 0xf0000000)`."""
        pc = self.registers.get("pc")
        text = self.kind + (f" at pc=0x{pc:08x}" if pc is not None else "")
        main = [r for f, r in zip(self.flags, self.reasons) if f not in ("MMARVALID", "BFARVALID")]
        if main:
            text += ": " + "; ".join(main)
        if self.address is not None:
            text += f" (address 0x{self.address:08x})"
        return text


def decode(registers: dict[str, int]) -> tuple[list[str], list[str]]:
    """Names and reasons of the bits set in CFSR and HFSR."""
    flags: list[str] = []
    reasons: list[str] = []
    for reg, table in (("cfsr", CFSR_BITS), ("hfsr", HFSR_BITS)):
        value = registers.get(reg, 0)
        for bit, (name, why) in sorted(table.items()):
            if value & (1 << bit):
                flags.append(name)
                reasons.append(why)
    return flags, reasons


def parse_cmlens_fault(line: str) -> FaultReport | None:
    """The kernels/ one-line fault report, or None."""
    m = _CMLENS.search(line)
    if not m:
        return None
    fault = FaultReport(m.group(1), "cmlens")
    fault.add_registers({k.lower(): int(v, 16) for k, v in _REG.findall(m.group(2))})
    return fault


def parse_ethosu_fault(line: str) -> FaultReport | None:
    """The first line of Ethos-U core_platform's hard-fault report, or None."""
    m = _ETHOSU.search(line)
    if not m:
        return None
    irq = int(m.group(1))
    fault = FaultReport(_EXC_NAMES.get(irq, f"IRQ{irq}" if irq >= 0 else "Fault"), "ethos-u")
    fault.add_registers({"pc": int(m.group(2), 16), "lr": int(m.group(3), 16),
                         "xpsr": int(m.group(4), 16), "sp": int(m.group(5), 16)})
    return fault


def parse_ethosu_fault_regs(line: str) -> dict[str, int] | None:
    """The second line (`cfsr=0x... bfar=0x... mmfar=0x...`), or None."""
    if not _ETHOSU_REGS.search(line):
        return None
    return {k.lower(): int(v, 16) for k, v in _REG.findall(line)}
