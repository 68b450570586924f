"""The schedule step (`--schedule auto|fit:BOARD|FILE`): a patch schedule of the job's lowered program,
searched or read from a file, checked bit for bit on the host against the unscheduled program, sized
by ExecuTorch's own plan. It reads the lower step's live final program (never lowers again) and leaves
`res.steps["schedule"]` (floors, Pareto front, the chosen schedule, its JSON document and its memory
report with the runtime and the board's verdict) and the scheduled program in the lowering's blobs
(`scheduled.pte`, `scheduled.bpte` with `scheduled.references.json`): the run and export steps take
those, and jobs/outputs.py (the one writer of a job's files) writes the schedule JSON and the .bpte."""
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


def _fit(result: Any, board: Any, ep: Any, target: str, sized: Callable[[bytes], dict[str, Any]]
         ) -> tuple[Any, dict[str, Any]]:
    """The front candidate with the fewest extra MACs whose whole firmware (the program's memory report
    with the runtime around it, `sized`) fits `board`; else exit 2 saying by how much the best one is short."""
    from backend_core.analyses.schedule.measure import serialise
    from backend_core.target.memory.fit import kib

    best: tuple[int, Any] | None = None
    from backend_core.analyses.schedule.search import checked

    for c in sorted(result.front, key=lambda c: c.extra_macs):
        r = result.program_of(ep, c, target)                 # (1, 1) "": no patches
        rep = sized(serialise(r.program, c.planner))
        v = rep["verdict"]
        if v["ram_fits"] and v["flash_fits"] and checked(result, c):     # checked on the host only now
            return c, rep
        if not v["flash_fits"]:          # a schedule adds code: flash is another wall, said as such
            raise BadInputError(f"{board.name}: the program does not fit its flash, with or without a schedule: "
                                + "; ".join(p for p in v["problems"] if p.startswith("flash")) + ".",
                                "Pick a board with more flash, or make the model smaller.")
        short = max(-v["ram_free_bytes"], 1)
        if best is None or short < best[0]:
            best = (short, c)
    short, c = best if best is not None else (0, None)
    what = (f"the least RAM of {result.tried} candidates ({c.split or 'no patches'}"
            + (f" in {c.grid[0]}×{c.grid[1]} patches" if c is not None and c.split else "") + ") is still "
            if c is not None else "")
    raise BadInputError(f"{board.name}: the model does not fit even with the best patch schedule: {what}short of "
                        f"RAM by {kib(short)}.",
                        "Try --input-dtype int8 (the caller quantizes), a board with more RAM, or a smaller input.")


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


def _has_convolutions(job: Job, ep: Any) -> None:
    """A program with no CMSIS-NN convolution has nothing to run patch by patch (a float program whose
    convolutions stayed on portable kernels: measured, torchvision's MobileNetV2 given an NCHW input)."""
    from backend_core.analyses.schedule.measure import program_macs
    from backend_core.analyses.schedule.prefix import user_input

    user_input(ep)                  # one 4-D image input first: the more telling refusal
    if program_macs(ep) == 0:
        raise BadInputError(f"{job.model}'s lowered program has no CMSIS-NN convolution to run patch by patch "
                            "(its convolutions, if any, run on portable kernels).",
                            "Lower it so the convolutions quantize (`cmlens lower` names the fallbacks; a CNN "
                            "usually wants a channels-last input).")


def fit_board(job: Job) -> Any:
    """The board `--schedule fit:BOARD` names, or for `fit` the job's own memory board (--board, or a board
    of --ram/--flash sizes); None for auto or a FILE."""
    from backend_core.common.boards.specs import board_named

    spec = job.schedule.spec
    if spec.startswith("fit:"):
        return board_named(spec[4:])
    if spec != "fit":
        return None
    board = job.memory_board()
    if board is None:
        raise BadInputError("--schedule fit without a board to fit.",
                            "Pass --board NAME (or --ram/--flash sizes), or --schedule fit:BOARD.")
    return board


def _sizer(job: Job, res: JobResult, board: Any, target: str, say: Callable[[str], None]
           ) -> Callable[[bytes], dict[str, Any]]:
    """The memory report of a scheduled .pte as the memory step makes one: ExecuTorch's plan, the runtime
    around it (the job's --runtime-from) and the board's verdict (the whole firmware, not the arena alone)."""
    from backend_core.orchestration.jobs.steps.memory import with_runtime
    from backend_core.target.memory import analyze_memory

    runtime = board is not None or job.wants("export")     # the bundle states the runtime too

    def sized(pte: bytes) -> dict[str, Any]:
        rep = analyze_memory(pte, None, target=target)
        rep["model"] = res.lowering.model
        return with_runtime(rep, board, say, elf=job.memory.elf, prefer=job.memory.runtime_from) if runtime else rep

    return sized


def scheduled_references() -> bytes:
    """references.json of the scheduled bundle: its expected outputs are the UNSCHEDULED lowered program
    run on the host, so a PASS at atol 0 means the schedule computes that program bit for bit."""
    from backend_core.target.judge.references import LOWERED, References

    refs = References(LOWERED, notes=["expected outputs: the unscheduled lowered program run on the host (the "
                                      "patch schedule must compute it bit for bit)"])
    return (json.dumps(refs.to_dict(), indent=1) + "\n").encode()


def schedule_step(job: Job, res: JobResult, emit: Callable[[str, dict[str, Any]], None],
                  cancel: threading.Event) -> None:
    """Search or read the schedule, check it on the host, and leave the scheduled program (.pte, and a
    .bpte with the unscheduled program's outputs) in the lowering's blobs; jobs/outputs.py writes them."""
    from backend_core.analyses.schedule.measure import serialise
    from backend_core.analyses.schedule.schedule_file import schedule_doc
    from backend_core.analyses.schedule.search import GRIDS, pick, search

    say = lambda text: emit("status", {"text": text})      # noqa: E731
    opts = job.schedule
    board = fit_board(job)                                 # an unknown board: exit 2 before any work
    ep, inputs = _live_program(job, res)
    _has_convolutions(job, ep)
    pte = _plain_pte(res)
    target = job.lower.target
    sized = _sizer(job, res, board or job.memory_board(), target, say)
    rep, float_short = None, ""
    if opts.spec not in ("auto", "fit") and board is None:
        chosen, result = _from_file(job, ep, inputs, pte, say)
    else:
        for dtype in ("float32", "int8") if opts.input_dtype == "any" else (opts.input_dtype,):
            result = search(ep, inputs, target, int8=dtype == "int8", grids=opts.grids or GRIDS,
                            splits=list(opts.splits) or None, on_progress=say, cancel=cancel,
                            check="chosen")       # pick()/_fit check the one they take, bit for bit
            if board is None:
                chosen, rep = pick(result), None
                break
            try:
                chosen, rep = _fit(result, board, ep, target, sized)
                break
            except BadInputError as exc:      # "any": the float input first, then an int8 one (said so)
                if dtype == "int8" or opts.input_dtype != "any":
                    raise BadInputError(f"with the float input: {float_short} With an int8 input: {exc.message}"
                                        if float_short else exc.message, exc.hint) from None
                float_short = exc.message
                say(f"no schedule with the float input fits {board.name}: searching with an int8 input")
    if chosen is None:
        raise BadInputError(f"No patch schedule of {job.model} passed the host check.",
                            "See the dropped candidates in the report.")
    rewritten = result.program_of(ep, chosen, target)
    program = rewritten.program
    scheduled = serialise(program, chosen.planner)
    rep = rep or sized(scheduled)
    doc = schedule_doc(job.model, target, pte, chosen.to_dict())
    say("bundling the scheduled program with the unscheduled program's outputs")
    res.lowering.blobs["scheduled.pte"] = scheduled
    res.lowering.blobs["scheduled.bpte"] = scheduled_bundle(program, chosen.planner, inputs, chosen.input_quant,
                                                            result.plain_outputs(ep, inputs))
    res.lowering.blobs["scheduled.references.json"] = scheduled_references()
    res.steps["schedule"] = {**result.to_dict(), "spec": opts.spec, "chosen": chosen.to_dict(), "schedule": doc,
                             "float_input_short": float_short or None,
                             "memory": rep, "board": board.name if board is not None else job.board,
                             "patched_nodes": list(rewritten.patched), "input_node": _input_name(ep),
                             "preflight": [f.to_dict() for f in preflight_of(program, scheduled)]}
