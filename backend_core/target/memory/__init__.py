"""Memory: what a lowered model needs on the microcontroller (flash, planned arena per memory id,
method allocator, temp pool, scratch, a per-op timeline with float islands), whether it fits a board,
and the runner's own figures to check the prediction against. Qt-free; `read_plan` (and so
`analyze_memory`) imports ExecuTorch's deserializer, so the GUI gets the result as JSON from a worker.

- plan.py           the .pte's plan (ExecuTorch's own non_const_buffer_sizes, allocation info, instructions)
- method_alloc.py   the method allocator's use, replaying Method::load's allocations
- timeline.py       live planned bytes per op, peak, largest tensors, float islands
- fit.py            place the needs in a board's regions: fits / does not fit by N (the boards: backend_core.common.boards)
- report.py         the JSON `memory` section and its text summary
- runner_figures.py the runner's UART memory lines and its out-of-memory errors in words
- elf.py            a built runner's flash / static RAM from `arm-none-eabi-size -A`
"""
from __future__ import annotations

from typing import Any

from backend_core.common.finding import WILL_FAIL, Finding
from backend_core.common.boards.specs import BoardSpec, board_named
from backend_core.target.memory.report import analyze_memory, attach_board, summary_lines
from backend_core.target.memory.fit import kib

__all__ = ["analyze_memory", "attach_board", "summary_lines", "fit_findings"]


def fit_findings(memory_report: dict[str, Any], board: BoardSpec | str) -> list[Finding]:
    """Pre-flight findings when the model does not fit `board` (a BoardSpec or a board name).

    `memory_report` is the `memory` section (`analyze_memory(...)` / report["memory"]). Returns
    `Finding(node, rule, message, fix, certainty=WILL_FAIL, evidence)` records, rules
    "memory-ram-does-not-fit" (node: the peak op) and "memory-flash-does-not-fit" (node ""); an empty
    list when it fits. The report itself is not changed."""
    spec = board_named(board) if isinstance(board, str) else board
    rep = attach_board(dict(memory_report), spec)
    v = rep["verdict"]
    out: list[Finding] = []
    ma = rep["method_allocator"]
    evidence = tuple(f"{n['kind']} {n['name']}: {n['bytes']} B -> {n['region'] or 'no region'}" for n in v["needs"])
    if not v["ram_fits"]:
        pool = next(n for n in v["needs"] if n["kind"] == "ram")
        out.append(Finding(
            node=rep.get("peak_op") or "", rule="memory-ram-does-not-fit",
            message=(f"RAM: does not fit {spec.name} by {kib(-v['ram_free_bytes'])}. The runner's method "
                     f"allocator pool must hold the planned arena ({kib(ma['planned'])}) and what Method::load "
                     f"allocates ({kib(ma['loaded'])}) in one region; "
                     + "; ".join(p for p in v["problems"] if p.startswith("RAM"))
                     + ". On the target the runner stops with \"Could not allocate memory for planned buffer\" "
                     "or the method load fails with MemoryAllocationFailed (0x21)."),
            fix=("; ".join(rep.get("suggestions") or []) or
                 "Shrink the peak (smaller input, fewer channels at the peak op) or pick a board with a larger RAM "
                 f"region; the peak is at {rep.get('peak_op')} ({kib(rep.get('peak_bytes', 0))} alive)."),
            certainty=WILL_FAIL, evidence=evidence, extra={"pool_bytes": pool["bytes"]}))
    if not v["flash_fits"]:
        out.append(Finding(
            node="", rule="memory-flash-does-not-fit",
            message=(f"Flash: does not fit {spec.name} by {kib(-(v['flash_free_bytes'] or 0))}: the .pte is "
                     f"{kib(rep['pte_bytes'])} ({kib(rep['constant_bytes'])} constants)."),
            fix="Fewer or int8 weights (float fallbacks keep fp32 weights), or a board with more flash.",
            certainty=WILL_FAIL, evidence=evidence))
    return out
