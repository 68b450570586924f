"""The memory prediction inside `cmlens run`: predict before the build, size the runner's pools from
it (`--tight`) or check forced pools against it (`--method-pool`), and afterwards put the runner's own
UART figures beside the prediction and its out-of-memory lines into words."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import CmlensError
from backend_core.target.memory.method_alloc import (ET_DEBUG_BUFFER_SIZE, estimate_method_allocator, etdump_base64_bound,
                           etdump_bytes_bound, first_refusal)
from backend_core.target.memory.elf import elf_sizes
from backend_core.target.memory.plan import program_bytes, read_plan
from backend_core.target.memory.runner_figures import RunnerMemory, compare, comparison_lines, explain_failure

Emit = Callable[[str, str], None]


def predict_for_run(model: Path, etdump_intermediates: bool, emit: Emit | None = None,
                    debug_buffer_bytes: int | None = None, uart_etdump: bool = True) -> dict[str, Any] | None:
    """The prediction for the runner that `cmlens run` builds for this .pte/.bpte (None, with a note,
    when the file cannot be analysed: the run itself still goes ahead)."""
    data = model.read_bytes()
    bundled = model.suffix == ".bpte"
    try:
        plan = read_plan(program_bytes(data) if bundled else data)
    except CmlensError as e:
        if emit:
            emit("cmlens", f"memory: no prediction for {model.name}: {e.message}")
        return None
    debug = debug_buffer_bytes or ET_DEBUG_BUFFER_SIZE
    est = estimate_method_allocator(plan, temp_pool=0x200000, etdump_intermediates=etdump_intermediates,
                                    bundled_inputs=bundled, debug_buffer_bytes=debug)
    # The libraries always have the event tracer: over the UART the runner then base64-encodes the ETDump
    # (and the debug buffer) into one more method-pool allocation after the run.
    b64 = etdump_base64_bound(plan, debug if etdump_intermediates else 0) if uart_etdump else 0
    return {"planned_bytes": plan.planned_bytes, "method_allocator": est.to_dict(),
            "temp_allocator_bytes": est.temp_pool_min, "pte_bytes": plan.pte_bytes,
            "etdump_base64_bytes": b64, "model_file": str(model),
            "etdump_bytes": etdump_bytes_bound(plan, etdump_intermediates),
            "replay": {"etdump_intermediates": etdump_intermediates, "bundled_inputs": bundled,
                       "debug_buffer_bytes": debug}, "refusal": None}


def run_pools(pred: dict[str, Any] | None, tight: bool, method_pool: int | None, temp_pool: int | None,
              emit: Emit) -> tuple[int | None, int | None]:
    """(method pool, temp pool) for the runner build; None keeps the runner's defaults."""
    if pred is None:
        if tight:
            emit("cmlens", "memory: --tight needs a prediction: keeping the default pools")
        return method_pool, temp_pool
    need = pred["method_allocator"]["used"]
    temp_need = pred["temp_allocator_bytes"]
    if tight:
        method_pool = method_pool if method_pool is not None else need + pred.get("etdump_base64_bytes", 0)
        temp_pool = temp_pool if temp_pool is not None else temp_need
        emit("cmlens", f"memory: tight build: method allocator pool {method_pool:,} B, temp pool {temp_pool:,} B "
                       f"(predicted: method allocator {need:,} B + ETDump base64 buffer "
                       f"{pred.get('etdump_base64_bytes', 0):,} B after the run; temp {temp_need:,} B)")
    if method_pool is not None and method_pool < need:
        refusal = _refusal(pred, method_pool)
        pred["refusal"] = refusal
        what = (f": expect \"Memory allocation failed: {refusal['requested']}B requested (adjusted for alignment), "
                f"{refusal['available']}B available\" ({refusal['kind']})" if refusal else "")
        emit("cmlens", f"pre-flight (memory): will fail: the method allocator pool ({method_pool:,} B) is smaller "
                       f"than the predicted need ({need:,} B = planned {pred['method_allocator']['planned']:,} + "
                       f"Method::load {pred['method_allocator']['loaded']:,} + inputs "
                       f"{pred['method_allocator']['input']:,}){what}")
    return method_pool, temp_pool


def _refusal(pred: dict[str, Any], pool: int) -> dict[str, Any] | None:
    """Replay the allocations into a pool of `pool` bytes: the first one the runtime will refuse."""
    data = Path(pred["model_file"]).read_bytes()
    plan = read_plan(program_bytes(data) if pred["replay"]["bundled_inputs"] else data)
    r = first_refusal(plan, pool, temp_pool=0x200000, **pred["replay"])
    return None if r is None else {"requested": r.requested, "available": r.available, "kind": r.kind}


def check_run(pred: dict[str, Any] | None, mem: RunnerMemory, method_pool: int | None,
              temp_pool: int | None, elf: Path | None = None, baked_model_bytes: int = 0) -> dict[str, Any] | None:
    """The `memory` block of a run result: prediction, runner figures, the row-by-row check, and the
    built runner's flash / static RAM (`arm-none-eabi-size -A`) when its ELF is given."""
    if pred is None:
        return None
    rows = compare(pred, mem) if mem.seen else []
    problem = explain_failure(mem, pred)
    lines = comparison_lines(rows) if rows else []
    mark = mem.board
    if mark is not None:      # the board layer's painted stack and sbrk high-water mark (kernels/common/memmark.c)
        lines.append(f"board layer: stack high-water mark {mark.stack_used:,} B of {mark.stack_size:,} B reserved; "
                     f"heap used {mark.heap_used:,} B of {mark.heap_size:,} B"
                     + (f" ({mark.heap_refused} request(s) refused)" if mark.heap_refused else ""))
        if mark.problems():
            problem = "; ".join(([problem] if problem else []) + mark.problems())
    sizes = None
    if elf is not None:
        try:
            sizes = elf_sizes(elf, baked_model_bytes)
            lines.append(f"runner ELF: code + read-only data {sizes['flash_code']:,} B (flash, without the model's "
                         f"{baked_model_bytes:,} B), static RAM {sizes['ram_static']:,} B (.data + .bss + stack + "
                         f"heap), allocator pools {sizes['pools']:,} B")
        except CmlensError as e:
            lines.append(f"runner ELF: not measured ({e.message})")
    return {"predicted": pred, "runner": mem.to_dict(), "check": rows,
            "pools": {"method": method_pool, "temp": temp_pool}, "elf": sizes,
            "ok": None if not rows else all(r["ok"] is not False for r in rows),
            "problem": problem, "lines": lines}
