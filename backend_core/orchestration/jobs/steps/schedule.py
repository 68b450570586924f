"""The schedule step (`--schedule auto|fit:BOARD|FILE`): a patch schedule of the job's lowered program,
searched or read from a file, checked bit for bit on the host against the unscheduled program, sized
by ExecuTorch's own plan. It reads the lower step's live final program (never lowers again) and leaves
`res.steps["schedule"]` (floors, Pareto front, the chosen schedule and its memory report), the
scheduled .pte in `res.lowering.blobs["scheduled.pte"]`, and the schedule JSON where the options say."""
from __future__ import annotations

import json
import threading
from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs.result import JobResult
from backend_core.orchestration.jobs.spec import Job


def _live_program(job: Job, res: JobResult) -> tuple[Any, tuple]:
    low = res.lowering
    pipe = getattr(low, "pipeline", None) if low is not None else None
    if pipe is None or pipe.final_program is None:
        raise BadInputError(f"{job.model} has no lowered program to schedule (a ready .pte/.bpte is not rewritten).",
                            "Give the model source (zoo name, model.py, .pt2): the schedule rewrites its lowering.")
    return pipe.final_program, tuple(pipe.example_inputs)


def _plain_pte(res: JobResult) -> bytes:
    pte = res.lowering.blobs.get("model.pte")
    if pte is None:
        from backend_core.stages.pipeline.program_files import pte_bytes

        pte = pte_bytes(res.lowering.pipeline.final_program)
    return pte


def _from_file(job: Job, ep: Any, inputs: tuple, pte: bytes, say: Callable[[str], None]) -> tuple[Any, Any]:
    from backend_core.analyses.schedule.measure import measure_pte, program_macs, serialise
    from backend_core.analyses.schedule.measure import copy_bytes
    from backend_core.analyses.schedule.rewrite import schedule_program
    from backend_core.analyses.schedule.schedule_file import read_schedule
    from backend_core.analyses.schedule.search import Candidate, SearchResult, bit_exact, host_inputs, _outputs
    from backend_core.analyses.schedule.prefix import layer_floor

    doc = read_schedule(job.schedule.spec, pte)
    int8 = doc["input"].get("dtype") == "int8"
    say(f"schedule {doc['split']} in {doc['grid'][0]}×{doc['grid'][1]} patches (from {job.schedule.spec})")
    r = schedule_program(ep, doc["split"], tuple(doc["grid"]), job.lower.target, int8=int8)
    plain, plain_macs = measure_pte(serialise(ep)), program_macs(ep)
    m = measure_pte(serialise(r.program, doc["planner"]))
    macs = program_macs(r.program)
    c = Candidate(doc["split"], tuple(doc["grid"]), int8, doc["planner"], m, macs, macs / plain_macs - 1,
                  copy_bytes(r.program), m.pte_bytes - plain.pte_bytes, r.pads,
                  input_quant=r.input_quant.to_dict() if r.input_quant else None)
    c.bit_exact = bit_exact(_outputs(ep, inputs), r.program, host_inputs(r.program, inputs, c.input_quant))
    if not c.bit_exact:
        raise BadInputError(f"The schedule in {job.schedule.spec} does not compute the unscheduled program's values "
                            "on the host reference.", "Search again: `cmlens memory MODEL --schedule auto`.")
    lf, lf_op = layer_floor(ep)
    return c, SearchResult(plain, plain_macs, lf, lf_op, 0, "", [c], 1)


def _fit(result: Any, board: Any, ep: Any, target: str) -> tuple[Any, dict[str, Any]]:
    """The front candidate with the fewest extra MACs whose whole firmware need fits `board`."""
    from backend_core.analyses.schedule.measure import serialise
    from backend_core.analyses.schedule.rewrite import schedule_program
    from backend_core.target.memory import analyze_memory
    from backend_core.target.memory.fit import kib

    best_short = None
    for c in sorted(result.front, key=lambda c: c.extra_macs):
        r = schedule_program(ep, c.split, c.grid, target, int8=c.int8_input)
        rep = analyze_memory(serialise(r.program, c.planner), None, board=board, target=target)
        if rep["verdict"]["ram_fits"]:
            return c, rep
        short = -rep["verdict"]["ram_free_bytes"]
        best_short = short if best_short is None else min(best_short, short)
    raise BadInputError(f"{board.name}: the model does not fit even with the best patch schedule; its RAM is short "
                        f"by {kib(best_short or 0)}.",
                        "Try --input-dtype int8, a board with more RAM, or a smaller input.")


def _input_name(ep: Any) -> str:
    """The program's image input (the window draws the patch grid on it)."""
    from backend_core.analyses.schedule.prefix import user_input

    return str(user_input(ep).name)


def preflight_of(program: Any, pte: bytes) -> list[Any]:
    """The pre-flight of the scheduled program as the target will see it (the rules that predicted the
    channels-last slice/cat failures on QEMU): a schedule must add no finding of its own."""
    from backend_core.analyses.preflight import check_snapshot
    from backend_core.common.snapshot.capture import capture

    return check_snapshot(capture(program, "scheduled", 0, "final", final=True), program=pte)


def scheduled_bundle(program: Any, planner: str, inputs: tuple, quant: dict[str, Any] | None,
                     expected: list[Any]) -> bytes:
    """The scheduled program as a .bpte whose expected outputs are the UNSCHEDULED program's host outputs:
    `cmlens run F.bpte` then judges the schedule on the target bit for bit against the program it replaces.
    Its input is the scheduled program's own (int8 when asked), in the program's dim order."""
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer

    from backend_core.analyses.schedule.measure import executorch_program
    from backend_core.analyses.schedule.search import host_inputs
    from backend_core.stages.pipeline.program_files import bundled_program

    xin = tuple(t.contiguous() for t in host_inputs(program, inputs, quant))
    bp = bundled_program(executorch_program(program, planner), list(xin), list(expected))
    return bytes(serialize_from_bundled_program_to_flatbuffer(bp))


def schedule_step(job: Job, res: JobResult, emit: Callable[[str, dict[str, Any]], None],
                  cancel: threading.Event) -> None:
    from backend_core.analyses.schedule.measure import serialise
    from backend_core.analyses.schedule.rewrite import schedule_program
    from backend_core.analyses.schedule.schedule_file import schedule_doc
    from backend_core.analyses.schedule.search import GRIDS, pick, search
    from backend_core.common.boards.specs import board_named
    from backend_core.common.files import write_atomic
    from backend_core.target.memory import analyze_memory

    say = lambda text: emit("status", {"text": text})      # noqa: E731
    opts = job.schedule
    board = None
    if opts.spec.startswith("fit:"):
        board = board_named(opts.spec[4:])                    # an unknown board: exit 2 before any work
    ep, inputs = _live_program(job, res)
    pte = _plain_pte(res)
    target = job.lower.target
    if opts.spec not in ("auto",) and board is None:
        chosen, result = _from_file(job, ep, inputs, pte, say)
        rep = None
    else:
        result = search(ep, inputs, target, int8=opts.input_dtype == "int8", grids=opts.grids or GRIDS,
                        splits=list(opts.splits) or None, on_progress=say, cancel=cancel)
        if board is not None:
            chosen, rep = _fit(result, board, ep, target)
        else:
            chosen, rep = pick(result), None
    if chosen is None:
        raise BadInputError(f"No patch schedule of {job.model} passed the host check.",
                            "See the dropped candidates in the report.")
    r = schedule_program(ep, chosen.split, chosen.grid, target, int8=chosen.int8_input)
    scheduled = serialise(r.program, chosen.planner)
    if rep is None:
        rep = analyze_memory(scheduled, None, board=job.memory_board(), target=target)
    doc = schedule_doc(job.model, target, pte, chosen.to_dict())
    res.lowering.blobs["scheduled.pte"] = scheduled
    res.steps["schedule"] = {**result.to_dict(), "chosen": chosen.to_dict(), "schedule": doc, "memory": rep,
                             "board": board.name if board is not None else job.board,
                             "patched_nodes": list(r.patched), "input_node": _input_name(ep),
                             "preflight": [f.to_dict() for f in preflight_of(r.program, scheduled)]}
    if opts.output:
        from backend_core.analyses.schedule.search import _outputs

        say("bundling the scheduled program with the unscheduled program's outputs")
        bpte = scheduled_bundle(r.program, chosen.planner, inputs, chosen.input_quant, _outputs(ep, inputs))
        res.files["schedule"] = write_atomic(opts.output, (json.dumps(doc, indent=1) + "\n").encode())
        res.files["scheduled_bpte"] = write_atomic(opts.output.replace(".schedule.json", "") + ".scheduled.bpte", bpte)
