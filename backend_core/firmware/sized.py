"""An MCU's memory sizes on the QEMU board with the same core: `cmlens run MODEL --board stm32f746`.

The firmware is linked into the MCU's flash and RAM regions, laid out inside the QEMU board's own
memory (M7: mps2-an500, M4: mps2-an386, M33: mps2-an505, M55: mps3-an547), each section in the region
the fit verdict (backend_core.memory.verdict) placed it: code, read-only data and the model in flash,
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

from ..errors import BadInputError
from .boards import BOARDS_JSON, Board, MemoryRegion, board_for

# verdict need -> the linker script alias (kernels/linker/cmlens_sections.ld) of its section
NEED_ALIAS = {"runtime code + read-only data": "CODE", ".pte": "MODEL", "runtime .data + .bss": "DATA",
              "stack": "STACK", "heap": "HEAP", "method allocator pool": "POOL", "temp allocator pool": "TEMP"}
FILE_POOL = 16      # baked model: the runner's semihosting file pool is never used (it must not be 0 B)
_ALIGN = 0x100


def _align(n: int, a: int = _ALIGN) -> int:
    return (n + a - 1) // a * a


def qemu_base(core: str) -> Board:
    """The QEMU board with this core; BadInputError when QEMU has none (M85: no QEMU board)."""
    try:
        return board_for(core, "qemu")
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


def sized_board(spec: Any, verdict: dict[str, Any], out_root: Path | None = None, *, stack: int,
                heap: int) -> Board:
    """A kernels/ Board with `spec`'s (memory.boards.BoardSpec) regions on the QEMU board of its core,
    sections where `verdict` placed them, written as a one-row boards.json under `out_root` (default
    <cache>/boards) in a directory named by its content, so a runner build directory keeps its table."""
    base = qemu_base(spec.core)
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
    text = json.dumps({"about": f"Generated by backend_core/firmware/sized.py for {name}: do not edit.",
                       "cpus": table["cpus"], "runtime_defaults": table.get("runtime_defaults", {}),
                       "boards": [row]}, indent=1)
    from .build import cache_dir

    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = (Path(out_root) if out_root is not None else cache_dir() / "boards") / f"{name}-{digest}" / "boards.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        path.write_text(text)
    from .boards import load_table

    board = load_table(path)[1][name]
    return replace(board, table_file=str(path))


def link_overflow(lines: list[str]) -> list[tuple[str, int]]:
    """(region, bytes) from the linker's "region `X' overflowed by N bytes" lines."""
    import re

    return [(m.group(1), int(m.group(2))) for line in lines
            for m in [re.search(r"region `?(\w+)'? overflowed by (\d+) bytes", line)] if m]


class DoesNotFitError(BadInputError):
    """The fit verdict says the firmware does not fit the board: stopped before the build (exit 2)."""

    def __init__(self, report: dict[str, Any]) -> None:
        v, b = report["verdict"], report["board"]
        without = "" if report.get("runtime") else " (before the runtime around it, which is not measured for this CPU)"
        super().__init__(f"{report.get('model', 'The model')} does not fit {b['name']}{without}: "
                         + "; ".join(v["problems"]) + ".",
                         "The same verdict as `cmlens memory MODEL --board " + b["name"] + "`: pick a board with "
                         "more memory, or shrink the model (the suggestions there).")
        self.report = report


def plan_board_run(model: Path, spec: Any, out_root: Path | None = None, *, ops: list[str],
                   etdump: bool = False, refuse: bool = True, on_status: Any = None) -> tuple[Board, dict[str, Any]]:
    """The sized Board and the memory report (with its verdict) for running `model` (.pte/.bpte) with
    `spec`'s sizes; DoesNotFitError before any build when the verdict says it does not fit. The
    runner's pools are then the verdict's own figures: report["pools"] = {"method": B, "temp": B}."""
    from ..memory.plan import program_bytes
    from ..memory.report import analyze_memory, attach_board, attach_runtime
    from .link_probe import runtime_for

    if etdump:
        raise BadInputError("--etdump does not go with --board: its debug buffer (2 MiB by default) is not "
                            "part of the firmware the verdict sizes.", "Drop --etdump, or run without --board.")
    base = qemu_base(spec.core)
    data = model.read_bytes()
    rep = analyze_memory(program_bytes(data) if model.suffix == ".bpte" else data, None, target=base.cpu,
                         bundled_inputs=model.suffix == ".bpte")
    rep["model"] = model.stem
    attach_runtime(rep, runtime_for(base.cpu, ops, etdump_bytes=rep["etdump_bytes"], on_status=on_status))
    attach_board(rep, spec)
    if rep.get("runtime") is None and not rep["verdict"]["fits"] and refuse:
        raise DoesNotFitError(rep)       # it does not fit even without the runtime (the verdict notes it)
    if rep.get("runtime") is None:
        raise BadInputError(f"No measurement of the runtime for {base.cpu}: the verdict would leave it out.",
                            f"Build the libraries once (`cmlens run MODEL --target {base.cpu}`), then retry.")
    if not rep["verdict"]["fits"] and refuse:
        raise DoesNotFitError(rep)
    need = {n["name"]: n["bytes"] for n in rep["verdict"]["needs"]}
    rt = rep["runtime"]
    board = sized_board(spec, rep["verdict"], out_root, stack=rt["stack"], heap=rt["heap"])
    rep["pools"] = {"method": need["method allocator pool"], "temp": need["temp allocator pool"]}
    return board, rep


def is_mcu_board(name: str) -> bool:
    """A board of resources/boards/mcus.json (sized onto QEMU), not one of kernels/boards.json."""
    from ..memory.boards import board_named

    return not board_named(name).simulated


def run_board(name: str, target: str, sim: str, default: Board | None = None) -> Board:
    """The board a `--board NAME` run starts from: a kernels/ board itself, or for an MCU the QEMU board
    of its core (sized once the model's needs are known). BadInputError when the core is not the
    target's or the MCU has no QEMU board with its core."""
    from ..cpus import normalise_target
    from ..memory.boards import board_named
    from .boards import board_by_name

    spec = board_named(name)
    cpu = normalise_target(target)
    if spec.simulated:
        board = board_by_name(spec.name)
        if board.cpu != cpu:
            raise BadInputError(f"{spec.name} has a {board.cpu}, the model is lowered for {cpu}.",
                                f"Pass --target {board.cpu} (or leave --target out with --board).")
        return board
    if sim != "qemu":
        raise BadInputError(f"An MCU's sizes ({spec.name}) run on QEMU.", "Use --sim qemu with --board.")
    base = qemu_base(spec.core)
    if base.cpu != cpu:
        raise BadInputError(f"{spec.name} has a {spec.core}, the model is lowered for {cpu}.",
                            f"Pass --target {spec.core} (or leave --target out with --board).")
    return base


def verdict_lines(rep: dict[str, Any]) -> list[str]:
    """The fit verdict a `--board` run prints before it builds (the lines of `cmlens memory`)."""
    from ..memory.verdict import kib

    v, b = rep["verdict"], rep["board"]
    out = [f"fit: {b['name']} ({kib(b['ram_bytes'])} RAM, {kib(b['flash_bytes'])} flash), linked into those sizes "
           f"on QEMU {qemu_base(b['core']).machine}"]
    for n in v["needs"]:
        out.append(f"  {n['kind']:5} {kib(n['bytes']):>12}  {n['name']:30} -> {n['region'] or 'DOES NOT FIT'}")
    out.append("fit: FITS, " + f"{kib(v['ram_free_bytes'])} RAM free, {kib(v['flash_free_bytes'] or 0)} flash free"
               if v["fits"] else "fit: DOES NOT FIT: " + "; ".join(v["problems"]))
    return out


def explain_link_failure(exc: Exception, rep: dict[str, Any]) -> None:
    """Put the linker's overflow counts beside the verdict's numbers in a failed sized link's message."""
    over = link_overflow(getattr(exc, "detail", "").splitlines())
    if not over:
        return
    v = rep["verdict"]
    said = "; ".join(v["problems"]) if not v["fits"] else "it fits"
    exc.message = (getattr(exc, "message", str(exc)) + " The linker: " +
                   "; ".join(f"region {r} overflowed by {n:,} bytes" for r, n in over) +
                   f". The fit verdict for {rep['board']['name']}: {said}.")


def fit_check(rep: dict[str, Any], elf: Path, mark: Any) -> dict[str, Any]:
    """After a `--board` run: the verdict's runtime figures beside the built ELF's sections (they must
    agree within 5 %) and the board layer's measured stack/heap marks beside the reservations."""
    from ..memory.elf import elf_sizes

    rt = rep["runtime"]
    got = elf_sizes(elf)
    rows = []
    for figure, pred, real in (("runtime code + read-only data", rt["code"] + rt["data"], got["code"] + got["data"]),
                               ("runtime .data + .bss", rt["data"] + rt["bss"], got["data"] + got["bss"]),
                               ("stack reserved", rt["stack"], got["stack"]), ("heap reserved", rt["heap"], got["heap"])):
        rel = abs(pred - real) / max(real, 1)
        rows.append({"figure": figure, "predicted": pred, "elf": real, "within_5_percent": rel <= 0.05,
                     "difference": pred - real})
    lines = [f"fit on {rep['board']['name']}: prediction ({rt['source']}) vs the linked ELF"]
    lines += [f"  {r['figure']:32} {r['predicted']:>10,} {r['elf']:>10,}  {r['difference']:+,} B "
              f"({'ok' if r['within_5_percent'] else 'MORE THAN 5 % OFF'})" for r in rows]
    marks = None
    if mark is not None:
        marks = mark.to_dict()
        lines.append(f"  stack high-water mark {mark.stack_used:,} B of {mark.stack_size:,} B reserved; heap used "
                     f"{mark.heap_used:,} B of {mark.heap_size:,} B" + (f"; {'; '.join(mark.problems())}"
                                                                        if mark.problems() else ""))
    return {"rows": rows, "marks": marks, "ok": all(r["within_5_percent"] for r in rows), "lines": lines}
