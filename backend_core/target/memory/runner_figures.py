"""The stock Arm runner's own memory accounting, read from its UART lines, set beside the prediction;
and its out-of-memory errors put into words.

arm_executor_runner.cpp prints (ET_LOG Info):
  Setup Method allocator pool. Size: 62914560 bytes.
  Setting up planned buffer with mem_id=1, size 20464.
  method_allocator_used:     31504 / 62914560  free: 62883056 ( used: 0 % )
  method_allocator_planned:  20464 bytes
  method_allocator_loaded:   11040 bytes
  method_allocator_input:    0 bytes
  method_allocator_executor: 0 bytes
  temp_allocator:            2097152
and on failure MemoryAllocator's "Memory allocation failed: 180B requested (adjusted for alignment),
4B available", "Could not allocate memory for planned buffer with mem_id=1, size N in SLOW_MEMORY_REGION",
"Loading of method forward failed with status 0x21".
The kernels/ board layer adds one line at exit (common/memmark.c: a painted stack, sbrk's high-water mark):
  CMLENS MEMORY: stack_used=1544 stack_size=32768 heap_used=4672 heap_size=1048576 heap_refused=0"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_POOL = re.compile(r"Setup Method allocator pool\. Size: (\d+) bytes")
_PLANNED_BUF = re.compile(r"Setting up planned buffer with mem_id=(\d+), size (\d+)")
_USED = re.compile(r"method_allocator_used:\s+(\d+)\s*/\s*(\d+)")
_FIELD = re.compile(r"method_allocator_(planned|loaded|input|executor):\s+(\d+)")
_TEMP = re.compile(r"temp_allocator:\s+(\d+)")
_PTE = re.compile(r"model_pte_program_size:\s+(\d+)")
_B64 = re.compile(r"\[base64\] buffer size: (\d+)")
_ALLOC_FAILED = re.compile(r"Memory allocation failed: (\d+)B requested \(adjusted for alignment\), (\d+)B available")
_PLANNED_FAILED = re.compile(r"Could not allocate memory for planned buffer with mem_id=(\d+), size (\d+)(?: in (\w+))?")
_LOAD_FAILED = re.compile(r"Loading of method (\S+) failed with status 0x([0-9a-fA-F]+)")
_OTHER_FAILED = re.compile(r"(Failed to allocate [^.]*|Could not allocate memory for [^.]*)")
_BOARD_MARK = re.compile(r"CMLENS MEMORY: stack_used=(\d+) stack_size=(\d+) heap_used=(\d+) heap_size=(\d+)"
                         r"(?: heap_refused=(\d+))?")
MEMORY_ALLOCATION_FAILED = 0x21     # runtime/core/error.h Error::MemoryAllocationFailed


@dataclass
class RunnerMemory:
    """What the runner said about its memory (None: the line was not printed)."""

    method_pool: int | None = None
    planned_buffers: dict[int, int] = field(default_factory=dict)   # mem_id -> size
    used: int | None = None
    planned: int | None = None
    loaded: int | None = None
    input: int | None = None
    executor: int | None = None
    temp_pool: int | None = None
    pte_program_size: int | None = None
    etdump_base64: int | None = None      # the base64 buffer taken after the run to print the ETDump
    failures: list[str] = field(default_factory=list)               # raw out-of-memory lines
    board: "BoardMark | None" = None      # the board layer's stack/heap high-water marks at exit

    @property
    def seen(self) -> bool:
        return self.used is not None or bool(self.planned_buffers) or bool(self.failures)

    def to_dict(self) -> dict[str, Any]:
        return {"method_pool": self.method_pool, "planned_buffers": {str(k): v for k, v in self.planned_buffers.items()},
                "used": self.used, "planned": self.planned, "loaded": self.loaded, "input": self.input,
                "executor": self.executor, "temp_pool": self.temp_pool, "pte_program_size": self.pte_program_size,
                "etdump_base64": self.etdump_base64, "failures": list(self.failures),
                "board": None if self.board is None else self.board.to_dict()}


@dataclass(frozen=True)
class BoardMark:
    """The board layer's `CMLENS MEMORY:` line: stack and heap high-water marks, measured on the target."""

    stack_used: int
    stack_size: int
    heap_used: int
    heap_size: int
    heap_refused: int = 0

    @property
    def stack_full(self) -> bool:
        """The paint is gone down to the stack's limit: it reached the limit (and may have overflowed)."""
        return self.stack_used >= self.stack_size

    def problems(self) -> list[str]:
        out = []
        if self.stack_full:
            out.append(f"the stack reached its limit ({self.stack_size:,} B): it may have overflowed into the "
                       "memory below it; give it more room (-Wl,--defsym=__STACK_SIZE=...)")
        if self.heap_refused:
            out.append(f"the heap ({self.heap_size:,} B) refused {self.heap_refused} request(s): "
                       f"{self.heap_used:,} B were in use; give it more room (-Wl,--defsym=__HEAP_SIZE=...)")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"stack_used": self.stack_used, "stack_size": self.stack_size, "heap_used": self.heap_used,
                "heap_size": self.heap_size, "heap_refused": self.heap_refused, "problems": self.problems()}


def parse_board_mark(line: str) -> BoardMark | None:
    m = _BOARD_MARK.search(line)
    if not m:
        return None
    stack_used, stack_size, heap_used, heap_size = (int(g) for g in m.groups()[:4])
    return BoardMark(stack_used, stack_size, heap_used, heap_size, int(m.group(5) or 0))


def feed_line(mem: RunnerMemory, line: str) -> bool:
    """Update `mem` from one UART line; True when the line was a memory line."""
    if (mark := parse_board_mark(line)) is not None:
        mem.board = mark
    elif m := _PLANNED_BUF.search(line):
        mem.planned_buffers[int(m.group(1))] = int(m.group(2))
    elif m := _USED.search(line):
        mem.used, mem.method_pool = int(m.group(1)), int(m.group(2))
    elif m := _FIELD.search(line):
        setattr(mem, m.group(1), int(m.group(2)))
    elif m := _TEMP.search(line):
        mem.temp_pool = int(m.group(1))
    elif m := _POOL.search(line):
        mem.method_pool = int(m.group(1))
    elif m := _PTE.search(line):
        mem.pte_program_size = int(m.group(1))
    elif m := _B64.search(line):
        mem.etdump_base64 = int(m.group(1))
    elif (_ALLOC_FAILED.search(line) or _PLANNED_FAILED.search(line) or _LOAD_FAILED.search(line)
          or _OTHER_FAILED.search(line)):
        mem.failures.append(line.strip())
    else:
        return False
    return True


def parse_runner_memory(text: str) -> RunnerMemory:
    mem = RunnerMemory()
    for line in text.splitlines():
        feed_line(mem, line)
    return mem


def explain_failure(mem: RunnerMemory, prediction: dict[str, Any] | None = None) -> str | None:
    """The runner's out-of-memory lines as one sentence a user can act on (None: no such line; a method
    load that failed for another reason, e.g. 0x14 OperatorMissing, is not called out of memory)."""
    parts = []
    for line in mem.failures:
        if m := _PLANNED_FAILED.search(line):
            parts.append(f"the method allocator pool is too small for the planned buffer of memory id {m.group(1)} "
                         f"({int(m.group(2)):,} bytes)")
        elif (m := _ALLOC_FAILED.search(line)) and not any("bytes requested" in p for p in parts):
            # only the first refusal: the ones after it are the runtime carrying on with a null pointer
            parts.append(f"the pool ran out while loading the program: {int(m.group(1)):,} bytes requested, "
                         f"{int(m.group(2)):,} left")
        elif (m := _LOAD_FAILED.search(line)) and int(m.group(2), 16) == MEMORY_ALLOCATION_FAILED:
            parts.append(f"loading method {m.group(1)} failed: out of memory (MemoryAllocationFailed, 0x21)")
        # any other load status (0x14 OperatorMissing, ...) is not a memory failure: not explained here
    if not parts:
        return None
    text = "Out of memory on the target: " + "; ".join(dict.fromkeys(parts)) + "."
    ref = (prediction or {}).get("refusal")
    first = next((m for f in mem.failures if (m := _ALLOC_FAILED.search(f))), None)
    if ref and first and (int(first.group(1)), int(first.group(2))) == (ref["requested"], ref["available"]):
        text += (f" This is the allocation the prediction said the pool would refuse ({ref['kind']}: "
                 f"{ref['requested']} B requested, {ref['available']} B left).")
    if prediction:
        need = prediction["method_allocator"]["used"]
        pool = mem.method_pool
        text += (f" The prediction says the method allocator needs {need:,} bytes"
                 + (f" and the runner's pool has {pool:,}" if pool is not None else "")
                 + ": rebuild with ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE >= "
                 f"{need:,} (`cmlens run --tight` sizes it from the prediction).")
    return text


def compare(prediction: dict[str, Any], mem: RunnerMemory) -> list[dict[str, Any]]:
    """Rows: figure, predicted, runner, difference; `exact` rows must match, `bound` rows must be
    an upper bound within 10 %."""
    ma = prediction["method_allocator"]
    rows = []
    for i, size in enumerate(prediction["planned_bytes"]):
        got = mem.planned_buffers.get(i + 1)
        rows.append({"figure": f"planned buffer mem_id={i + 1}", "predicted": size, "runner": got, "rule": "exact",
                     "ok": None if got is None else got == size})
    for key, rule in (("planned", "exact"), ("loaded", "bound"), ("input", "bound"), ("used", "bound")):
        got = getattr(mem, key)
        pred = ma[key]
        ok = None if got is None else (pred == got if rule == "exact" else got <= pred <= max(got * 1.1, got + 16))
        rows.append({"figure": f"method_allocator_{key}", "predicted": pred, "runner": got, "rule": rule, "ok": ok})
    ref = prediction.get("refusal")
    if ref:
        refused = next((hit for f in mem.failures if (hit := _ALLOC_FAILED.search(f))), None)
        seen = None if refused is None else (int(refused.group(1)), int(refused.group(2)))
        rows.append({"figure": "first refused allocation (requested, available)",
                     "predicted": f"{ref['requested']}, {ref['available']}",
                     "runner": None if seen is None else f"{seen[0]}, {seen[1]}", "rule": "exact",
                     "ok": None if seen is None else seen == (ref["requested"], ref["available"])})
    b64 = prediction.get("etdump_base64_bytes") or 0
    if b64 and mem.etdump_base64 is not None:
        rows.append({"figure": "ETDump base64 buffer (after run)", "predicted": b64, "runner": mem.etdump_base64 + 1,
                     "rule": "cover", "ok": b64 >= mem.etdump_base64 + 1})
    return rows


def comparison_lines(rows: list[dict[str, Any]]) -> list[str]:
    out = [f"{'memory figure':34} {'predicted':>12} {'runner':>12}  check"]
    for r in rows:
        got = "-" if r["runner"] is None else (f"{r['runner']:,}" if isinstance(r["runner"], int) else r["runner"])
        pred = f"{r['predicted']:,}" if isinstance(r["predicted"], int) else r["predicted"]
        mark = {None: "not printed", True: "ok", False: "MISMATCH"}[r["ok"]]
        rule = {"exact": "exact", "bound": "upper bound ≤ +10 %", "cover": "upper bound (headroom)"}[r["rule"]]
        out.append(f"{r['figure']:34} {pred:>12} {got:>12}  {mark} ({rule})")
    return out
