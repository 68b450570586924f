"""The `memory` step: the memory report of a model source (zoo name, file, .pt2) or of a ready
`.pte`/`.bpte`: lower (cached) with the `.pte`, then analyse. And the same model across the ten CPUs:
CMSIS-NN scratch sizes, and so the arena, depend on the CPU's kernel family (ds_cnn: 0 B M0, 256 B M4,
20,608 B M55)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..models.sniff import is_program_path
from ..errors import BadInputError
from .lower_step import lower_source, lowering_failed
from ..boards.specs import BoardSpec
from ..memory.plan import program_bytes
from ..memory.report import analyze_memory
from ..pipeline.stages import PipelineOptions


def memory_of(source: str, target: str = "cortex-m55", flow: str = "legacy", *, board: BoardSpec | None = None,
              elf: dict[str, int] | None = None, use_cache: bool = True,
              on_status: Callable[[str], None] | None = None,
              options: PipelineOptions | None = None) -> dict[str, Any]:
    """The `memory` section for `source`; BadInputError for bad input or a lowering that failed."""
    p = Path(source)
    if is_program_path(p):
        if not p.is_file():
            raise BadInputError(f"Model file {p} does not exist.", "Check the path.")
        rep = analyze_memory(program_bytes(p.read_bytes()), None, board=board, target=target, elf=elf)
        rep["model"] = p.name
        return rep
    res = lower_source(source, options or PipelineOptions(target=target, flow=flow), want_pte=True, use_cache=use_cache,
                on_status=on_status)
    if res.status != "done" or "model.pte" not in res.blobs:
        raise lowering_failed(source, res, "Run `cmlens lower` on it to see the failing stage.")
    rep = analyze_memory(res.blobs["model.pte"], res.final, board=board, target=res.options.target, elf=elf)
    rep["model"] = res.model
    rep["from_cache"] = res.from_cache
    return rep


def per_cpu(source: str, flow: str = "legacy", targets: tuple[str, ...] | None = None,
            on_status: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """One row per CPU: kernel family, arena per memory id, largest scratch, method allocator, .pte."""
    from ..cpus import ISA, TARGETS

    rows = []
    for t in targets or TARGETS:
        if on_status:
            on_status(f"lowering for {t}")
        rep = memory_of(source, t, flow, on_status=on_status)
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
