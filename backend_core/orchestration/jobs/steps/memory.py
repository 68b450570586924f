"""The `memory` step's helpers: the memory report of a ready `.pte`/`.bpte` read as it is (a model
source's is made from the job's lower step). And the same model across the ten CPUs:
CMSIS-NN scratch sizes, and so the arena, depend on the CPU's kernel family (ds_cnn: 0 B M0, 256 B M4,
20,608 B M55)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs.steps.failed_lowering import lowering_failed
from backend_core.common.boards.specs import BoardSpec
from backend_core.target.memory.plan import program_bytes
from backend_core.target.memory.report import analyze_memory


def memory_of_program(path: str, target: str, *, board: BoardSpec | None = None,
                      elf: dict[str, int] | None = None) -> dict[str, Any]:
    """The `memory` section of a ready .pte/.bpte, read as it is (a model source's comes from the job's
    lower step: `memory.source.memory_for_result`)."""
    p = Path(path)
    if not p.is_file():
        raise BadInputError(f"Model file {p} does not exist.", "Check the path.")
    rep = analyze_memory(program_bytes(p.read_bytes()), None, board=board, target=target, elf=elf)
    rep["model"] = p.name
    return rep


def with_runtime(mem: dict, board: Any, status: Any, elf: str | None = None, prefer: str = "auto") -> dict:
    """The runtime around the model (this machine's libraries, else the shipped table) in the memory
    report, then the board's verdict: the whole firmware (the memory step's and the schedule step's)."""
    from backend_core.target.build.link_probe import runtime_for
    from backend_core.target.memory import attach_board
    from backend_core.target.memory.report import attach_runtime

    if mem.get("operators") is not None and mem.get("target"):
        attach_runtime(mem, runtime_for(mem["target"], mem["operators"], elf=elf, prefer=prefer,
                                        etdump_bytes=mem.get("etdump_bytes"), on_status=status))
    if board is not None:
        attach_board(mem, board)
    return mem


def per_cpu(job: Any, own: Any, lower_for: Callable[[Any], Any],
            on_status: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """One row per CPU: kernel family, arena per memory id, largest scratch, method allocator, .pte. Each
    other CPU is a lower Job of its own (the lower step is the one road), submitted by `lower_for` (the job
    layer's, with the job's events and cancel: no import back into it); the job's own CPU reuses `own`."""
    from dataclasses import replace

    from backend_core.common.cpus import ISA, TARGETS, normalise_target
    from backend_core.target.memory.source import memory_for_result
    from backend_core.orchestration.jobs.spec import Job

    rows = []
    for t in TARGETS:
        if own is not None and t == normalise_target(job.lower.target):
            low = own
        else:
            if on_status:
                on_status(f"lowering for {t}")
            done = lower_for(Job(job.model, replace(job.lower, target=t), steps=("lower",)))
            if done.status != "done":
                done.raise_error()
            low = done.lowering
        rep = memory_for_result(low)
        if rep is None:
            raise lowering_failed(job.model, low, "Run `cmlens lower` on it to see the failing stage.")
        rows.append({"target": t, "isa": ISA[t], "planned_bytes": rep["planned_bytes"],
                     "arena_bytes": rep["arena_bytes"], "scratch_bytes_max": rep["scratch_bytes_max"],
                     "scratch_bytes_total": sum(s["bytes"] for s in rep["scratch"]),
                     "method_allocator_used": rep["method_allocator"]["used"], "pte_bytes": rep["pte_bytes"],
                     "constant_bytes": rep["constant_bytes"], "peak_op": rep["peak_op"]})
    return rows


def per_cpu_lines(rows: list[dict[str, Any]]) -> list[str]:
    out = [f"{'CPU':14} {'kernels':7} {'arena B':>10} {'max scratch B':>14} {'all scratch B':>14} "
           f"{'method alloc B':>15} {'.pte B':>10}"]
    for r in rows:
        out.append(f"{r['target']:14} {r['isa']:7} {r['arena_bytes']:>10,} {r['scratch_bytes_max']:>14,} "
                   f"{r['scratch_bytes_total']:>14,} {r['method_allocator_used']:>15,} {r['pte_bytes']:>10,}")
    return out
