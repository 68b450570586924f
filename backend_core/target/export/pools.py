"""The bundle's static buffers, sized exactly from the program's memory plan (no malloc, no guessed
"1.5 MiB and tune"): one planned arena per memory id (`non_const_buffer_sizes[1:]`, what ExecuTorch's
memory planning wrote into the program, CMSIS-NN scratch included), the method allocator (what
`Method::load` takes, replayed allocation by allocation by memory.method_alloc; on ds_cnn equal to the
stock runner's own `method_allocator_loaded` to the byte) and the temp allocator (the TensorMeta lists
`Method::init` resolves operators with, which the runtime frees after each kernel).

Each figure carries the sentence that says where it came from: the generated header prints it beside
the #define, and the report repeats it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.target.memory.method_alloc import estimate_method_allocator
from backend_core.target.memory.plan import ProgramPlan

POOL_ALIGN = 16            # every pool is aligned(16): the replay assumes an aligned base
# The API's own static objects (BufferDataLoader, Program, two MemoryAllocators, HierarchicalAllocator,
# MemoryManager, Method, the arena spans): .bss of cmlens_model.cpp.obj, measured 416 B with one planned
# arena (arm-none-eabi-g++ 12.2, cortex-m55 and cortex-m7: 32-bit Arm, the same layout on every Cortex-M).
API_OBJECTS_BYTES = 408
SPAN_BYTES = 8


def _round(n: int, a: int = POOL_ALIGN) -> int:
    return (n + a - 1) // a * a


@dataclass(frozen=True)
class Pool:
    name: str                 # the C array
    define: str               # its size #define
    section: str              # the named section it is placed in
    bytes: int
    source: str               # where the figure came from

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "define": self.define, "section": self.section, "bytes": self.bytes,
                "source": self.source}


@dataclass
class Pools:
    planned: list[Pool] = field(default_factory=list)     # one per memory id with a non-zero size
    method: Pool | None = None
    temp: Pool | None = None
    method_by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def all(self) -> list[Pool]:
        return [*self.planned, *([self.method] if self.method else []), *([self.temp] if self.temp else [])]

    @property
    def ram_bytes(self) -> int:
        return sum(p.bytes for p in self.all)

    @property
    def api_objects_bytes(self) -> int:
        """The API's static runtime objects beside the pools (API_OBJECTS_BYTES)."""
        return API_OBJECTS_BYTES + SPAN_BYTES * max(len(self.planned), 1)

    def to_dict(self) -> dict[str, Any]:
        return {"planned": [p.to_dict() for p in self.planned],
                "method_allocator": self.method.to_dict() if self.method else None,
                "temp_allocator": self.temp.to_dict() if self.temp else None, "ram_bytes": self.ram_bytes,
                "api_objects_bytes": self.api_objects_bytes,
                "method_allocator_by_kind": dict(self.method_by_kind)}


def size_pools(plan: ProgramPlan) -> Pools:
    """The bundle's pools for `plan` (the program's first method)."""
    out = Pools()
    for mem_id, size in enumerate(plan.buffer_sizes[1:], start=1):
        out.planned.append(Pool(
            f"cmlens_planned_arena_{mem_id}", f"CMLENS_PLANNED_ARENA_{mem_id}_SIZE", f".bss.cmlens_planned_arena_{mem_id}",
            size, f"non_const_buffer_sizes[{mem_id}] of the program's execution plan ({plan.method}): ExecuTorch's "
                  f"memory plan for memory id {mem_id}" + (" (CMSIS-NN scratch included)" if mem_id == 1 else "")))
    first = estimate_method_allocator(plan, temp_pool=0x200000, bundled_inputs=True)
    temp = max(_round(first.temp_pool_min), POOL_ALIGN)
    est = estimate_method_allocator(plan, temp_pool=temp, bundled_inputs=True)
    out.temp = Pool("cmlens_temp_allocator_pool", "CMLENS_TEMP_ALLOCATOR_POOL_SIZE", ".bss.cmlens_temp_allocator", temp,
                    f"the largest operator's TensorMeta list ({est.max_kernel_args} arguments x (12 B + 16 dim-order "
                    f"bytes)), which Method::init takes from the temp allocator and frees after each kernel "
                    f"(runtime/executor/method.cpp resolve_operator), rounded up to {POOL_ALIGN} B")
    out.method = Pool("cmlens_method_allocator_pool", "CMLENS_METHOD_ALLOCATOR_POOL_SIZE", ".bss.cmlens_method_allocator",
                      _round(est.loaded),
                      "Method::load's allocations replayed from the program (backend_core/target/memory/method_alloc.py: "
                      + ", ".join(f"{k} {v} B" for k, v in est.loaded_by_kind.items())
                      + f"; {est.loaded} B, rounded up to {POOL_ALIGN} B); the planned arenas are separate buffers")
    out.method_by_kind = dict(est.loaded_by_kind)
    return out
