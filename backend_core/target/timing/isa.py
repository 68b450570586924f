"""The runner ELF's instructions by address, each in one timing class, from `arm-none-eabi-objdump -d`.

QEMU 7.2's own `-d in_asm` disassembler (Debian's capstone 4) does not know MVE (it prints `ldc`/`stc`
and `.byte` for Helium instructions), binutils 2.40 does: QEMU's log gives which addresses ran, the ELF's
disassembly what they are. A mnemonic this table does not know is class `unmodelled`, never dropped."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from backend_core.common.errors import ToolMissingError

# The classes, in display order. mve* count instructions; each is 4 beats of 32 bits on these cores.
CLASSES = ("alu", "mac_simd", "div", "load", "store", "branch_taken", "branch_not_taken",
           "fp", "mve", "mve_load", "mve_store", "unmodelled")
INDEX = {c: i for i, c in enumerate(CLASSES)}
MVE_BEATS = 4

_CONDS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le")
_MUL = re.compile(r"^(mul|mla|mls|smul|smla|smls|smmul|smmla|smmls|smuad|smusd|umull|umlal|umaal|smull|smlal)")
_SIMD = re.compile(r"^(s|u|q|sh|uh|uq)(add|sub|asx|sax)(8|16)|^q(add|sub|dadd|dsub)$|^(ssat|usat)(16)?$|"
                   r"^(sxt|uxt)a?b16$|^(sxt|uxt)a[bh]$|^pkh(bt|tb)$|^sel$|^usada?8$|^(s|u)sat16$|^clz$|^rbit$|^rev")
_DIV = re.compile(r"^(sdiv|udiv)$|^v(div|sqrt)\.")
_LOOP = ("le", "letp", "lctp", "wls", "dls", "wlstp", "dlstp")
_VEC_LOAD = re.compile(r"^vld(r[bhwd]|[24][0-3])")
_VEC_STORE = re.compile(r"^vst(r[bhwd]|[24][0-3])")


@dataclass(frozen=True)
class Insn:
    size: int          # bytes (2 or 4)
    mnemonic: str
    cls: str           # one of CLASSES (a branch says "branch_taken"; the trace splits taken/not)
    conditional: bool  # a branch that may fall through (conditional, cbz/cbnz, loop end)


def _base(mnemonic: str) -> str:
    """"ldr.w" -> "ldr", "bne.n" -> "bne"."""
    return mnemonic.split(".")[0] if mnemonic.endswith((".w", ".n")) else mnemonic


def _branch(m: str, ops: str) -> tuple[bool, bool] | None:
    """(is a branch, conditional) for control-flow mnemonics, None otherwise."""
    b = m.split(".")[0]
    if b in ("b", "bl", "blx", "bx", "tbb", "tbh"):
        return True, False
    if b in ("cbz", "cbnz") or b in _LOOP:
        return True, b not in ("dls", "dlstp", "lctp")
    if b.startswith("b") and b[1:] in _CONDS:
        return True, True
    if b in ("pop", "ldm", "ldmia") and "pc" in ops:
        return True, False
    if b == "mov" and ops.startswith("pc"):
        return True, False
    return None


def classify(mnemonic: str, ops: str = "") -> tuple[str, bool]:
    """(class, conditional branch) of one instruction as objdump writes it."""
    m = mnemonic.lower()
    br = _branch(m, ops)
    if br is not None:
        if m.split(".")[0] in ("dls", "dlstp", "lctp"):      # loop set-up: no control transfer
            return "alu", False
        return "branch_taken", br[1]
    b = _base(m)
    if m.startswith((".", "udf", "undefined")) or "UNDEFINED" in ops:
        return "unmodelled", False
    if _DIV.match(b):
        return "div", False
    if b.startswith("v"):
        if _VEC_LOAD.match(b) and "q" in ops.split(",")[0]:
            return "mve_load", False
        if _VEC_STORE.match(b) and "q" in ops.split(",")[0]:
            return "mve_store", False
        if b.startswith(("vldr", "vldm", "vpop", "vld")):
            return "load", False
        if b.startswith(("vstr", "vstm", "vpush", "vst")):
            return "store", False
        if re.search(r"\bq[0-7]\b", ops) or b.startswith(("vpst", "vpt", "vctp", "vaddv", "vmlav", "vmladav",
                                                           "vmlaldav", "vminv", "vmaxv", "vaddlv")):
            return "mve", False
        return "fp", False
    if b.startswith(("ldr", "ldm", "pop", "lda", "ldrex")):
        return "load", False
    if b.startswith(("str", "stm", "push", "stl", "strex")):
        return "store", False
    if _MUL.match(b) or _SIMD.match(b):
        return "mac_simd", False
    if b.startswith(("mrs", "msr", "cps", "dmb", "dsb", "isb", "wfi", "wfe", "sev", "bkpt", "svc", "nop",
                     "it", "cdp", "mcr", "mrc")):
        return "alu", False
    if re.match(r"^(adc|add|adr|and|asr|bfc|bfi|bic|cmn|cmp|eor|lsl|lsr|mov|mvn|neg|orn|orr|ror|rrx|rsb|sbc|"
                r"sbfx|sub|teq|tst|ubfx|uxt|sxt|csel|csinc|csinv|csneg|cset|csetm|cinc|cinv|cneg|"
                r"sqrshr|sqshl|srshr|uqrshl|uqshl|urshr|asrl|lsll|lsrl|sqrshrl|uqrshll|pld|pli|clrm|vscclrm)", b):
        return "alu", False
    return "unmodelled", False


def objdump_tool() -> str:
    path = shutil.which("arm-none-eabi-objdump")
    if not path:
        raise ToolMissingError("arm-none-eabi-objdump", "sudo apt-get install binutils-arm-none-eabi",
                               "count instructions by class for the cycle estimate")
    return path


# objdump's architecture per core: without armv8.1-m.main it decodes MVE loads as `ldc`.
ARCH = {"cortex-m4": "armv7e-m", "cortex-m7": "armv7e-m", "cortex-m33": "armv8-m.main",
        "cortex-m35p": "armv8-m.main", "cortex-m55": "armv8.1-m.main", "cortex-m85": "armv8.1-m.main"}


def disassemble(elf: str | Path, cpu: str) -> dict[int, Insn]:
    """Address -> Insn for every instruction of the ELF's executable sections (~0.5 s for a runner)."""
    arch = [f"-m{ARCH[cpu]}"] if cpu in ARCH else []
    out = subprocess.run([objdump_tool(), "-d", "-w", *arch, str(elf)], capture_output=True, text=True, check=True,
                         stdin=subprocess.DEVNULL).stdout
    insns: dict[int, Insn] = {}
    for line in out.splitlines():
        parts = line.split("\t")           # "addr:", raw bytes, mnemonic, operands [@ comment]
        if len(parts) < 3 or not parts[0].endswith(":"):
            continue
        try:
            addr = int(parts[0].strip()[:-1], 16)
        except ValueError:
            continue
        mnemonic = parts[2].strip()
        if not mnemonic:
            continue
        ops = parts[3].split("@")[0].split(";")[0].strip() if len(parts) > 3 else ""
        cls, cond = classify(mnemonic, ops)
        insns[addr] = Insn(len(parts[1].replace(" ", "")) // 2, mnemonic, cls, cond)
    return insns


def disassembly(elf: str | Path, cpu: str, cache: Path | None = None) -> dict[int, Insn]:
    """disassemble(), kept per ELF content + core + this table's source in `cache` (default the cmlens
    cache): a re-run of the same runner skips objdump and the classification (~1 s on ds_cnn)."""
    from backend_core.common.files import write_atomic
    from backend_core.stages.cache import cache_root

    h = hashlib.sha256(Path(elf).read_bytes())
    h.update(cpu.encode())
    h.update(Path(__file__).read_bytes())             # a changed class table is a new key
    path = (cache or cache_root() / "disasm") / f"{h.hexdigest()[:32]}.json"   # JSON: a cache is never code
    try:
        return {int(a): Insn(int(n), str(m), str(c), bool(k)) for a, n, m, c, k in json.loads(path.read_text())}
    except (OSError, ValueError, TypeError):
        pass
    insns = disassemble(elf, cpu)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps([[a, i.size, i.mnemonic, i.cls, i.conditional] for a, i in insns.items()]))
    except OSError:
        pass                                          # a read-only cache only costs the next run objdump
    return insns


def symbol_address(elf: str | Path, name: str) -> int | None:
    """The address of a function symbol (Thumb bit cleared), None when the ELF has none."""
    nm = objdump_tool().replace("objdump", "nm")
    out = subprocess.run([nm, str(elf)], capture_output=True, text=True, check=True,
                         stdin=subprocess.DEVNULL).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16) & ~1
    return None
