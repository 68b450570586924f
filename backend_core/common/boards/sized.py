"""An MCU's memory sizes on the QEMU board with the same core: `cmlens run MODEL --board stm32f746`.

The firmware is linked into the MCU's flash and RAM regions, laid out inside the QEMU board's own
memory (M7: mps2-an500, M4: mps2-an386, M33: mps2-an505, M55: mps3-an547), each section in the region
the fit verdict (backend_core.target.memory.fit) placed it: code, read-only data and the model in flash,
.data/.bss, stack, heap, the method allocator pool and the temp pool in the RAM region the verdict chose.
The runner's pools are sized from the prediction, so what does not fit fails to link
("region `SRAM1' overflowed by N bytes") instead of running in the simulator's 16 MiB. The board row
goes to a boards.json of its own (CMake reads it through CMLENS_BOARDS_JSON)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.common.boards.table import BOARDS_JSON, Board, MemoryRegion, board_for, load_table

# verdict need -> the linker script alias (kernels/linker/cmlens_sections.ld) of its section
NEED_ALIAS = {"runtime code + read-only data": "CODE", ".pte": "MODEL", "runtime .data + .bss": "DATA",
              "stack": "STACK", "heap": "HEAP", "method allocator pool": "POOL", "temp allocator pool": "TEMP"}
FILE_POOL = 16      # baked model: the runner's semihosting file pool is never used (it must not be 0 B)
_ALIGN = 0x100


def _align(n: int, a: int = _ALIGN) -> int:
    return (n + a - 1) // a * a


# An MCU core QEMU does not model runs on the QEMU board of the core with the same instruction set: the
# Cortex-M85 on the M55's (Armv8.1-M + MVE, the same CMSIS-NN Helium kernels); its cycle estimate then
# uses the M85's timing table on the M55's instruction stream (backend_core.target.timing).
QEMU_STAND_IN = {"cortex-m85": "cortex-m55"}


def qemu_base(core: str) -> Board:
    """The QEMU board with this core (an M85 MCU: the M55's, QEMU_STAND_IN); BadInputError when none."""
    try:
        return board_for(QEMU_STAND_IN.get(core, core), "qemu")
    except Exception as exc:  # UnsupportedTargetError: say it in the board's terms
        raise BadInputError(f"QEMU has no board with a {core} to run this MCU's sizes on.",
                            getattr(exc, "hint", "") or "Pick a board with a Cortex-M4, M7, M33 or M55.") from exc


def lay_out(regions: list[dict[str, Any]], base: Board) -> list[MemoryRegion]:
    """The MCU's regions at addresses inside `base`'s memory: flash at the start of the base's CODE
    region, RAM regions packed first-fit into the base's writable regions in order (so an STM32F746's
    DTCM/SRAM1/SRAM2 sit at 0x20000000/0x20010000/0x2004C000 of mps2-an500's SSRAM23, as on the chip)."""
    code = base.region("CODE")
    cursor = {r.name: r.origin for r in base.memory}
    out: list[MemoryRegion] = []
    for r in regions:
        if r["kind"] != "flash":
            continue
        if cursor[code.name] + r["bytes"] > code.origin + code.length:
            raise BadInputError(f"The {r['name']} region ({r['bytes']:,} B) is larger than {base.name}'s code "
                                f"region {code.name} ({code.length:,} B).", "Use a board with less flash.")
        out.append(MemoryRegion(r["name"], cursor[code.name], r["bytes"], "rx", f"{r['what'] or 'flash'} "
                                f"(in {base.name} {code.name})"))
        cursor[code.name] = _align(cursor[code.name] + r["bytes"])
    writable = [m for m in base.memory if "w" in m.access]
    for r in regions:
        if r["kind"] == "flash":
            continue
        home = next((m for m in writable if cursor[m.name] + r["bytes"] <= m.origin + m.length), None)
        if home is None:
            raise BadInputError(f"{base.name} has no RAM region that holds the {r['name']} region "
                                f"({r['bytes']:,} B).", "Use a board with smaller RAM regions.")
        out.append(MemoryRegion(r["name"], cursor[home.name], r["bytes"], "rw",
                                f"{r['what'] or 'RAM'} (in {base.name} {home.name})"))
        cursor[home.name] = _align(cursor[home.name] + r["bytes"])
    return out


def sections_for(verdict: dict[str, Any], memory: list[MemoryRegion], base: Board) -> dict[str, str]:
    """Section aliases from the verdict's placement. A need the verdict could not place goes to the
    largest region of its kind, where the link then fails with the linker's own overflow count."""
    flash = [m for m in memory if m.access == "rx"]
    ram = [m for m in memory if m.access == "rw"]
    aliases: dict[str, str] = {}
    for need in verdict["needs"]:
        alias = NEED_ALIAS.get(need["name"])
        if alias is None:
            continue
        pool = flash if need["kind"] == "flash" else ram
        aliases[alias] = need["region"] or max(pool, key=lambda m: m.length).name
    code = aliases.get("CODE") or flash[0].name
    aliases.setdefault("CODE", code)
    aliases.setdefault("MODEL", code)
    aliases.setdefault("DATA", max(ram, key=lambda m: m.length).name)
    aliases.setdefault("POOL", aliases["DATA"])
    base_vectors = base.region("VECTORS")
    # the reset vector must be where the QEMU board fetches it: in the flash when it starts there
    aliases["VECTORS"] = code if base_vectors.name == base.region("CODE").name else base_vectors.name
    aliases["BIG"] = aliases["POOL"]
    return aliases


def sized_board(spec: Any, verdict: dict[str, Any], out_root: Path, *, stack: int, heap: int,
                base: Board | None = None) -> Board:
    """A kernels/ Board with `spec`'s (boards.specs.BoardSpec) regions on the QEMU board of its core,
    sections where `verdict` placed them, written as a one-row boards.json under `out_root` (the run's
    <cache>/boards) in a directory named by its content, so a runner build directory keeps its table."""
    base = base or qemu_base(spec.core)      # the run's board (boards.resolve), else resolved here
    regions = [{"name": r.name, "bytes": r.size, "kind": r.kind, "what": r.what} for r in spec.regions]
    memory = lay_out(regions, base)
    aliases = sections_for(verdict, memory, base)
    keep = [m for m in base.memory if m.name == aliases["VECTORS"]]     # the base's vector region, if used
    memory = keep + memory
    name = f"{spec.name}-on-{base.name}"
    row = {"name": name, "description": f"{spec.name} sizes ({spec.description or spec.core}) on QEMU {base.machine}",
           "simulator": "qemu", "machine": base.machine, "cpu": base.cpu, "cpu_clock_hz": base.cpu_clock_hz,
           "icount_shift": base.icount_shift, "uart_base": hex(base.uart_base), "uart_clock_hz": base.uart_clock_hz,
           "eot_on_exit": False,
           "memory": [{"name": m.name, "origin": f"0x{m.origin:08X}", "length": f"0x{m.length:08X}",
                       "access": m.access, "what": m.what} for m in memory],
           "sections": aliases, "runner_pools": {"SEMIHOSTING_FILE_ALLOCATOR": hex(FILE_POOL)},
           "stack_bytes": hex(stack), "heap_bytes": hex(heap), "qemu_board": base.name,
           "reference": f"{spec.source}; laid out in {base.name} ({base.reference})"}
    table = json.loads(BOARDS_JSON.read_text())
    text = json.dumps({"about": f"Generated by backend_core/common/boards/sized.py for {name}: do not edit.",
                       "cpus": table["cpus"], "runtime_defaults": table.get("runtime_defaults", {}),
                       "boards": [row]}, indent=1)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = Path(out_root) / f"{name}-{digest}" / "boards.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        path.write_text(text)
    board = load_table(path)[1][name]
    return replace(board, table_file=str(path))


def link_overflow(lines: list[str]) -> list[tuple[str, int]]:
    """(region, bytes) from the linker's "region `X' overflowed by N bytes" lines."""
    import re

    return [(m.group(1), int(m.group(2))) for line in lines
            for m in [re.search(r"region `?(\w+)'? overflowed by (\d+) bytes", line)] if m]


