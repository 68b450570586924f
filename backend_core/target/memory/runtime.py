"""The runtime around the model: what the firmware `cmlens run` builds holds besides the `.pte` and the
runner's pools, for one CPU and op set, before any firmware is built.

- code + read-only data (flash) and .data/.bss (RAM): measured from this machine's built ExecuTorch
  libraries when the library cache has them for the CPU (backend_core/target/build/link_probe.py links
  those archives the way the runner build does and reads the result), otherwise the table the product
  ships (resources/boards/runtime.json, measured on a reference build per CPU and per portable op);
- the stack: the board layer's reservation (kernels/boards.json runtime_defaults), beside the
  high-water marks measured on QEMU with the painted stack (common/memmark.c);
- the heap: sized to what the firmware uses (the sbrk high-water mark measured on QEMU).
A built runner ELF (`--elf`) gives the same figures from its sections (`from_elf`). Qt-free."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from backend_core.common.kernel_sources import kernels_file
from backend_core.target.memory.elf import totals

ROOT = Path(__file__).resolve().parents[3]
RUNTIME_JSON = ROOT / "resources" / "boards" / "runtime.json"
BOARDS_JSON = kernels_file("boards.json")


@dataclass
class RuntimeSize:
    """Bytes of the firmware that are not the model: flash = code + data (its load image), RAM = data +
    bss + stack + heap. `source`: "elf" (a built runner), "libraries" (this machine's library cache) or
    "table" (resources/boards/runtime.json)."""

    source: str
    cpu: str
    code: int
    data: int
    bss: int
    stack: int
    heap: int
    stack_measured: dict[str, int] = field(default_factory=dict)   # "model cpu" -> high-water mark (B)
    heap_measured: dict[str, int] = field(default_factory=dict)
    parts: dict[str, int] = field(default_factory=dict)            # code + data by component
    ops: list[str] = field(default_factory=list)                   # the portable ops counted
    event_tracer: bool = True      # cmlens's libraries always have ETDump: a base64 buffer after the run
    notes: list[str] = field(default_factory=list)
    where: str = ""                # the ELF, the library install or the table it came from

    @property
    def flash(self) -> int:
        return self.code + self.data

    @property
    def static_ram(self) -> int:
        return self.data + self.bss

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["flash"], d["static_ram"] = self.flash, self.static_ram
        return d


def load_table(path: Path = RUNTIME_JSON) -> dict[str, Any]:
    return json.loads(Path(path).read_text()) if Path(path).is_file() else {"cpus": {}}


def reservations() -> tuple[int, int]:
    """(stack, heap) bytes every kernels/ board reserves unless its row says otherwise."""
    d = json.loads(BOARDS_JSON.read_text()).get("runtime_defaults", {})
    return int(str(d.get("stack_bytes", "0")), 0), int(str(d.get("heap_bytes", "0")), 0)


def heap_for(etdump_bytes: int | None, table: dict[str, Any] | None = None) -> int:
    """The heap the runner needs: newlib's stdio buffers plus ETDumpGen's flatcc builder, which mallocs
    its buffers (doubling) and the finished ETDump. Linear in the ETDump's size, fitted to the QEMU
    marks of the reference runs (table "heap_model"), rounded up to newlib malloc's 4 KiB step plus one
    step for where the heap starts. None: the board layer's default reservation."""
    model = (table or load_table()).get("heap_model")
    if etdump_bytes is None or not model:
        return reservations()[1]
    need = model["base"] + model["per_etdump_byte"] * etdump_bytes
    page = model.get("page", 4096)
    return int((need + page - 1) // page * page + page)


def _marks(row: dict[str, Any], key: str) -> dict[str, int]:
    return {k: int(v) for k, v in row.get(key, {}).items()}


def from_table(cpu: str, ops: list[str], table: dict[str, Any] | None = None,
               etdump_bytes: int | None = None) -> RuntimeSize | None:
    """The shipped measurements for `cpu` with these portable ops (None: the CPU was never measured);
    `etdump_bytes` (the report's ETDump bound) sizes the heap."""
    table = table or load_table()
    row = table.get("cpus", {}).get(cpu)
    if row is None:
        return None
    stack, heap = reservations()[0], heap_for(etdump_bytes, table)
    core = row["core"]
    code, data, bss = core["code"], core["data"], core["bss"]
    notes, counted = [], []
    per_op = row.get("ops", {})
    parts = dict(row.get("parts", {}))
    op_code = 0
    for op in ops:
        if op in per_op:
            m = per_op[op]
            code, data, bss = code + m["code"], data + m.get("data", 0), bss + m.get("bss", 0)
            op_code += m["code"] + m.get("data", 0)
            counted.append(op)
        else:
            worst = max((m["code"] for m in per_op.values()), default=0)
            code += worst
            op_code += worst
            notes.append(f"{op} is not in the table: counted as the largest measured portable op ({worst:,} B)")
    if ops:
        parts["portable ops"] = parts.get("portable ops", 0) + op_code
    if counted and row.get("ops_measured_on"):
        notes.append(f"the portable ops' sizes are {row['ops_measured_on']}'s (this CPU's reference libraries were "
                     f"built without the portable kernels; same Thumb-2 code generation)")
    ref = table.get("reference", {})
    return RuntimeSize("table", cpu, code, data, bss, stack, heap, _marks(row, "stack_marks"),
                       _marks(row, "heap_marks"), parts, counted, True, notes,
                       f"{RUNTIME_JSON.relative_to(ROOT)} (ExecuTorch {ref.get('executorch', '?')[:12]}, "
                       f"{ref.get('toolchain', '?')})")


def from_elf(sizes: dict[str, int], cpu: str = "", where: str = "") -> RuntimeSize:
    """A built runner's sections (elf.elf_sizes / elf.totals) as a RuntimeSize."""
    marks = (load_table().get("cpus", {}).get(cpu) or {}) if cpu else {}
    return RuntimeSize("elf", cpu, sizes["code"], sizes["data"], sizes["bss"], sizes["stack"], sizes["heap"],
                       _marks(marks, "stack_marks"), _marks(marks, "heap_marks"), {}, [], True, [], where)


def from_sections(sections: dict[str, int], cpu: str = "", where: str = "") -> RuntimeSize:
    return from_elf(totals(sections), cpu, where)


def portable_ops(ops: list[str]) -> list[str]:
    """The ops the runner registers from the portable / quantized kernel libraries (cortex_m::* ops are
    always linked in full: cortex_m_ops_lib is a whole archive)."""
    return sorted({op for op in ops if op.startswith(("aten::", "dim_order_ops::", "quantized_decomposed::"))})


def runtime_lines(rt: dict[str, Any]) -> list[str]:
    """What `cmlens memory` prints about the runtime."""
    from backend_core.target.memory.fit import kib

    src = {"elf": "the built runner ELF", "libraries": "this machine's ExecuTorch libraries (link probe)",
           "table": "the shipped table, measured on a reference build"}[rt["source"]]
    out = [f"runtime ({rt['cpu'] or '?'}): code + read-only data {kib(rt['code'])}, .data {kib(rt['data'])}, "
           f".bss {kib(rt['bss'])}, stack {kib(rt['stack'])}, heap {kib(rt['heap'])}  [from {src}]"]
    if rt.get("where"):
        out.append(f"  from: {rt['where']}")
    if rt.get("parts"):
        out.append("  code + data by part: " + ", ".join(f"{k} {kib(v)}" for k, v in rt["parts"].items()))
    if rt.get("ops"):
        out.append("  portable ops: " + ", ".join(rt["ops"]))
    if rt.get("stack_measured"):
        worst = max(rt["stack_measured"].items(), key=lambda kv: kv[1])
        out.append(f"  stack high-water mark on QEMU: up to {worst[1]:,} B ({worst[0]}) of the {rt['stack']:,} B "
                   f"reserved ({len(rt['stack_measured'])} runs measured)")
    if rt.get("heap_measured"):
        runs = ", ".join(f"{m} {b:,} B" for m, b in sorted(rt["heap_measured"].items(), key=lambda kv: kv[1]))
        out.append(f"  heap: {rt['heap']:,} B reserved for this model (sized from its ETDump bound); used on QEMU by "
                   f"the reference runs: {runs}")
    out += [f"  note: {n}" for n in rt.get("notes", [])]
    return out
