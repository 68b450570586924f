"""Does it fit? Place what the model needs into a board's memory regions and say by how much it
does or does not fit.

RAM: the stock Arm runner takes the planned buffers of memory id 1 (and 3..) and everything
Method::load allocates from ONE pool (the method allocator), so that pool must fit inside one
contiguous region; memory id 2 goes to a separate FAST_MEMORY pool; the temp allocator is a third pool;
the runtime's .data/.bss, stack and heap (runtime.py: measured from the libraries, the shipped table or
a built ELF) the others. Each is placed, largest first,
in the region with the least room that still holds it (simulated boards: where their linker script
puts the big pools). Flash: the .pte (constants + program) and the runtime's code and read-only data."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.boards.specs import BoardSpec, Region

FAST_MEMORY_ID = 2          # arm_executor_runner.cpp: FAST_MEMORY_REGION_INDEX (id 1) == mem_id 2


@dataclass
class Need:
    name: str
    bytes: int
    kind: str                       # ram | flash
    what: str = ""
    mem_ids: tuple[int, ...] = ()
    region: str | None = None       # where it was placed (None: it does not fit anywhere)
    room: int = 0                   # unplaced: the most any region had left when it was tried

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "bytes": self.bytes, "kind": self.kind, "what": self.what,
                "mem_ids": list(self.mem_ids), "region": self.region}


@dataclass
class MemoryFit:
    fits: bool
    ram_fits: bool
    flash_fits: bool
    ram_free_bytes: int              # negative: missing bytes (contiguous shortfall when a pool fits no region)
    flash_free_bytes: int | None     # None: the board has no flash figure
    needs: list[Need]
    regions: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"fits": self.fits, "ram_fits": self.ram_fits, "flash_fits": self.flash_fits,
                "ram_free_bytes": self.ram_free_bytes, "flash_free_bytes": self.flash_free_bytes,
                "needs": [n.to_dict() for n in self.needs], "regions": self.regions,
                "problems": list(self.problems), "notes": list(self.notes)}


def kib(n: int) -> str:
    return f"{n / 1024:,.1f} KiB"


RUNTIME_SOURCE = {"elf": "the built runner ELF", "libraries": "this machine's ExecuTorch libraries",
                  "table": "the shipped table (reference build)"}


def model_needs(planned: list[int], loaded: int, input_bytes: int, temp_pool: int, pte_bytes: int,
                constant_bytes: int, runtime: dict[str, Any] | None = None, etdump_buffer: int = 0) -> list[Need]:
    """What goes where, in the runner's terms (planned = non_const_buffer_sizes[1:]). `runtime`: a
    runtime.RuntimeSize as a dict (code, data, bss, stack, heap, source); `etdump_buffer`: the base64
    buffer the runner takes from the method pool after the run when it has the event tracer."""
    needs: list[Need] = []
    pool_ids = tuple(i + 1 for i, s in enumerate(planned) if s and i + 1 != FAST_MEMORY_ID)
    arena = sum((s + 15) // 16 * 16 for i, s in enumerate(planned) if s and i + 1 != FAST_MEMORY_ID)
    needs.append(Need("method allocator pool", arena + loaded + input_bytes + etdump_buffer, "ram",
                      f"planned arena {kib(arena)} (mem_id {', '.join(map(str, pool_ids)) or '-'}) + "
                      f"Method::load {kib(loaded)}" + (f" + inputs {kib(input_bytes)}" if input_bytes else "")
                      + (f" + ETDump output buffer {kib(etdump_buffer)}" if etdump_buffer else ""),
                      pool_ids))
    if len(planned) >= FAST_MEMORY_ID and planned[FAST_MEMORY_ID - 1]:
        needs.append(Need("planned fast memory pool", planned[FAST_MEMORY_ID - 1], "ram",
                          "planned buffer mem_id=2 (ET_ARM_BAREMETAL_PLANNED_FAST_MEMORY_SIZE)", (FAST_MEMORY_ID,)))
    needs.append(Need("temp allocator pool", temp_pool, "ram", "kernel temp data and operator resolution"))
    needs.append(Need(".pte", pte_bytes, "flash", f"constants {kib(constant_bytes)} + program "
                      f"{kib(pte_bytes - constant_bytes)}"))
    if runtime:
        src = RUNTIME_SOURCE.get(runtime["source"], runtime["source"])
        needs.append(Need("runtime code + read-only data", runtime["code"] + runtime["data"], "flash",
                          f"ExecuTorch runtime, kernels, runner, C library, board layer: .text/.rodata "
                          f"{kib(runtime['code'])} + .data image {kib(runtime['data'])}; from {src}"))
        needs.append(Need("runtime .data + .bss", runtime["data"] + runtime["bss"], "ram",
                          f".data {kib(runtime['data'])} + .bss {kib(runtime['bss'])}, without the pools; from {src}"))
        marks = runtime.get("stack_measured") or {}
        mark = f"; high-water mark measured on QEMU up to {max(marks.values()):,} B" if marks else ""
        needs.append(Need("stack", runtime["stack"], "ram", f"main stack reserved{mark}"))
        needs.append(Need("heap", runtime["heap"], "ram", "newlib heap, sized to what this model's runner uses "
                          "(ETDumpGen's malloc'd ETDump + stdio), from the QEMU marks"))
    return needs


def _place(needs: list[Need], regions: list[Region], prefer: str | None) -> dict[str, int]:
    free = {r.name: r.size for r in regions}
    for n in sorted(needs, key=lambda n: -n.bytes):
        if prefer and prefer in free and free[prefer] >= n.bytes:
            n.region = prefer
        else:
            fitting = [r for r in free if free[r] >= n.bytes]
            n.region = min(fitting, key=lambda r: free[r]) if fitting else None
            n.room = max(free.values(), default=0)
        if n.region is not None:
            free[n.region] -= n.bytes
    return free


def place_needs(needs: list[Need], board: BoardSpec) -> MemoryFit:
    ram_needs = [n for n in needs if n.kind == "ram"]
    flash_needs = [n for n in needs if n.kind == "flash"]
    problems: list[str] = []
    notes: list[str] = []
    if board.simulated:
        # One address space: the linker script decides. CODE gets the flash items, BIG the pools.
        by_name = {r.name: r for r in board.regions}
        regions = [Region(r.name, r.size, "ram", r.what) for r in board.regions]
        code = board.placement.get("CODE")
        big = board.placement.get("BIG")
        free = {r.name: r.size for r in regions}
        for n in flash_needs:
            n.region = code if code in by_name and free[code] >= n.bytes else None
            if n.region:
                free[n.region] -= n.bytes
        rest = _place(ram_needs, [Region(k, v, "ram") for k, v in free.items()], big)
        free = rest
        flash_cap = None
    else:
        free = _place(ram_needs, board.ram, None)
        ffree = _place(flash_needs, board.flash, None)
        flash_cap = board.flash_bytes
        free.update(ffree)
    region_rows = [{"name": r.name, "kind": r.kind, "bytes": r.size, "free_bytes": free.get(r.name, r.size),
                    "holds": [n.name for n in needs if n.region == r.name]} for r in board.regions]
    ram_total = sum(r.size for r in board.regions) if board.simulated else board.ram_bytes
    ram_need = sum(n.bytes for n in ram_needs) + (sum(n.bytes for n in flash_needs) if board.simulated else 0)
    unplaced_ram = [n for n in ram_needs if n.region is None]
    unplaced_flash = [n for n in flash_needs if n.region is None]
    ram_fits = not unplaced_ram and (not board.simulated or not unplaced_flash)
    if unplaced_ram:
        caps = [r.size for r in board.regions] if board.simulated else [r.size for r in board.ram]
        biggest = max(caps or [0])
        # short of what the roomiest region had left when the need was tried (the larger needs placed): a
        # need smaller than the largest region can fit none (measured: "short by -71.6 KiB" before)
        short = max(n.bytes - n.room for n in unplaced_ram)
        ram_free = -max(short, ram_need - ram_total, 1)
        for n in unplaced_ram:
            left = f", {kib(n.room)} of it left after the larger needs" if n.room < biggest else ""
            problems.append(f"RAM: the {n.name} ({kib(n.bytes)}) fits no RAM region of {board.name}: the largest "
                            f"holds {kib(biggest)}{left} (short by {kib(n.bytes - n.room)})")
        if ram_need > ram_total:
            problems.append(f"RAM: {kib(ram_need)} needed in all, {kib(ram_total)} on {board.name} (short by "
                            f"{kib(ram_need - ram_total)})")
    else:
        ram_free = ram_total - ram_need
    if board.simulated:
        flash_fits = not unplaced_flash
        flash_free = None
        if unplaced_flash:
            problems.append(f"flash: the code region {board.placement.get('CODE')} cannot hold the .pte and the runner")
    elif flash_cap:
        flash_need = sum(n.bytes for n in flash_needs)
        flash_fits = not unplaced_flash
        flash_free = flash_cap - flash_need
        if unplaced_flash:
            short = max(flash_need - flash_cap, max(n.bytes - n.room for n in unplaced_flash))
            problems.append(f"flash: {kib(flash_need)} needed, {kib(flash_cap)} on {board.name} "
                            f"(short by {kib(short)})")
    else:
        flash_fits, flash_free = True, None
        notes.append("no flash size given: flash not checked (add --flash SIZE)")
    if not any(n.name.startswith("runtime") for n in needs):
        notes.append("the runtime around the model (code, .data/.bss, stack, heap) is not included: "
                     "no measurement for this CPU")
    return MemoryFit(ram_fits and flash_fits, ram_fits, flash_fits, ram_free, flash_free, needs, region_rows,
                   problems, notes)
