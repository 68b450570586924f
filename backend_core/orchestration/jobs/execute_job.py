"""`execute_job(job, on_event, cancel)`: the one composition of the product's steps, shared by every CLI
subcommand, the GUI's worker processes and sweeps (local pool or Dask). Inputs in, JSON out: a failing
step becomes the result's `error` (with its step), never an exception, so a sweep row is never lost."""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

from backend_core.common.errors import Cancelled, CmlensError
from backend_core.orchestration.jobs.steps.evaluate import evaluate_step
from backend_core.orchestration.jobs.steps.repro import repro_step
from backend_core.orchestration.jobs.steps.schedule import schedule_step
from backend_core.orchestration.jobs.steps.tools import doctor_step, selftest_step
from backend_core.orchestration.jobs.outputs import check_output_folders, out_dir, write_outputs, writes_files
from backend_core.orchestration.jobs.result import CANCELLED, DONE, FAILED, JobResult
from backend_core.orchestration.jobs.spec import Job

EventCallback = Callable[[str, dict[str, Any]], None]
"""on_event(kind, data): kind "step" {name}, "status" {text}, "line" {stream, line}, "stage" {snapshot, planned},
"run_step" {name} (one of backend_core.common.protocol.RUN_STEPS, inside the run step), "progress" {phase, done,
total, text} (the numerics analysis)."""


def execute_job(job: Job, on_event: EventCallback | None = None,
            cancel: threading.Event | None = None) -> JobResult:
    """Run `job`'s steps in order (lower, check, memory, numerics, run/profile) and return its result."""
    emit = on_event or (lambda kind, data: None)
    cancel = cancel or threading.Event()
    res = JobResult(job)
    step = "outputs"
    try:
        check_output_folders(job.outputs, job.schedule.output if job.wants("schedule") else None)   # exit 2 now
        step = "lower"
        if job.wants("numerics"):
            step = "numerics"
            from backend_core.orchestration.jobs.steps.numerics import NumericsInputs

            res.numerics_inputs = NumericsInputs(job)   # a bad --inputs: exit 2 before the lowering
        if job.wants("run") or job.wants("profile"):
            step = "run"
            res.run_environment = _check_run_environment(job, emit)      # a missing checkout or tool: exit 2 before the lowering
        if job.wants("export"):
            step = "export"
            from backend_core.orchestration.jobs.steps.export import prepare_export

            prepare_export(job)                   # board, checkout, output folder: exit 2 before the lowering
        for step in job.steps:
            if cancel.is_set():
                raise Cancelled(f"cancelled before the {step} step")
            if step == "profile" and job.wants("run"):
                continue                          # the run step already profiled (Job.run_options)
            emit("step", {"name": step})
            start = time.monotonic()
            _STEPS[step](job, res, emit, cancel)
            res.timings[f"{step}_s"] = time.monotonic() - start
            if res.status == FAILED:
                break
        else:
            res.status = DONE
    except Cancelled as exc:
        res.status, res.exception = CANCELLED, exc
        res.error = _error(step, exc)
    except CmlensError as exc:
        res.status, res.exception = FAILED, exc
        res.error = _error(step, exc)
    if writes_files(job) and step != "outputs" and not _refused_schedule(res):   # unwritable / refused: nothing
        try:
            write_outputs(job, res)              # a failed lowering still gets its report
        except OSError as exc:
            res.status = FAILED
            res.error = {"step": "outputs", "type": "OSError", "message": f"cannot write an output: {exc}",
                         "hint": "Write the files somewhere you can write to.", "detail": "", "exit_code": 3}
    return res


def _refused_schedule(res: JobResult) -> bool:
    """A schedule refused as bad input (a file for another program, a grid larger than the tensor, a board
    no schedule fits): exit 2 with nothing written, not the lowering's files without the program asked for."""
    return bool(res.error and res.error.get("step") == "schedule" and res.error.get("exit_code") == 2)


def _check_run_environment(job: Job, emit: EventCallback) -> Any:
    """The run's checks before the lowering; their warnings (shown once per checkout) go out as lines. The
    environment (board, checkout, CMSIS-NN, simulator) is kept for the run step: resolved once."""
    from backend_core.common.errors import BadInputError
    from backend_core.orchestration.jobs.target_run.plan import prepare_run

    opts = job.run_options()
    et_root = opts.et_root or os.environ.get("EXECUTORCH_ROOT")
    if not et_root:
        raise BadInputError("No ExecuTorch checkout for the run step.",
                            "Pass --et-root PATH (or set EXECUTORCH_ROOT) on this machine or worker.")
    return prepare_run(opts, et_root, opts.cmsis_nn or os.environ.get("CMSIS_NN_PATH"),
                       on_line=lambda stream, line: emit("line", {"stream": stream, "line": line}))


def _error(step: str, exc: CmlensError) -> dict[str, Any]:
    return {"step": step, "type": type(exc).__name__, "message": exc.message, "hint": exc.hint,
            "detail": exc.detail, "exit_code": exc.exit_code}


def _status(emit: EventCallback) -> Callable[[str], None]:
    return lambda text: emit("status", {"text": text})


def _lower(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    from backend_core.orchestration.jobs.steps.lower import lower_step

    inputs = res.numerics_inputs
    lower_step(job, res, emit, cancel, on_model=inputs.on_model if inputs is not None else None)


def _check(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    from backend_core.orchestration.jobs.steps.preflight import run_preflight

    rep = run_preflight(job.model, job.lower.target, job.lower.flow, options=job.lower.pipeline_options(),
                        et_root=job.run.et_root, board=job.board, use_cache=job.lower.use_cache,
                        on_status=_status(emit), lowered=res.lowering)
    res.preflight = rep
    res.steps["check"] = rep.to_dict()


def _memory(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    from backend_core.common.cpus import normalise_target
    from backend_core.target.memory.source import memory_for_result
    from backend_core.common.errors import BadInputError
    from backend_core.orchestration.jobs.steps.memory import memory_of_program, per_cpu, with_runtime

    board = job.memory_board()
    mem = memory_for_result(res.lowering, None) if res.lowering is not None else None
    if mem is None and job.reads_program:   # a ready .pte/.bpte, read as it is (no lower step)
        mem = memory_of_program(job.model, normalise_target(job.lower.target))
    elif mem is None:
        raise BadInputError(f"{job.model} holds no program to size.",
                            "Give the model source or its .pte/.bpte (an .etrecord/.etdump has no program).")
    with_runtime(mem, board, _status(emit), elf=job.memory.elf, prefer=job.memory.runtime_from)
    if job.memory.all_cpus:
        def lower_for(cpu_job: Job) -> JobResult:     # a Job per CPU: cancellable, its status lines shown
            def relay(kind: str, data: dict) -> None:      # only its status: its stages are not this job's
                if kind == "status":
                    emit(kind, {**data, "text": f"{cpu_job.lower.target}: {data.get('text', '')}"})

            return execute_job(cpu_job, relay, cancel)

        mem["per_cpu"] = per_cpu(job, res.lowering, lower_for, on_status=_status(emit))
    res.steps["memory"] = mem


def _numerics(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    from backend_core.orchestration.jobs.steps.numerics import NumericsInputs, numerics_step

    numerics_step(job, res, emit, cancel, res.numerics_inputs or NumericsInputs(job))


def _run(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    from backend_core.common.errors import BadInputError
    from backend_core.orchestration.jobs.target_run.run_on_target import run_on_target

    opts = job.run_options()
    et_root = opts.et_root or os.environ.get("EXECUTORCH_ROOT")
    if not et_root:
        raise BadInputError("No ExecuTorch checkout for the run step.",
                            "Pass --et-root PATH (or set EXECUTORCH_ROOT) on this machine or worker.")
    workdir = out_dir(job) / "run" if job.out_dir else None
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    run = run_on_target(job.model, et_root=et_root, cmsis_nn=opts.cmsis_nn or os.environ.get("CMSIS_NN_PATH"),
                        options=opts, cancel_event=cancel, workdir=workdir,
                        on_line=lambda stream, line: emit("line", {"stream": stream, "line": line}),
                        on_step=lambda name: emit("run_step", {"name": name}),
                        lowering=job.lower.pipeline_options(), lowered=res.lowering,
                        environment=res.run_environment)
    res.run = run
    res.steps["run"] = run.to_dict()
    if "elf" in job.keep:
        res.files["elf"] = str(run.elf)
    for name, path in run.files.items():
        if "etdump" in job.keep or name.startswith("out-"):
            res.files[name] = str(path)


def _export(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    from backend_core.orchestration.jobs.steps.export import export_step

    export_step(job, res, emit, cancel)


_STEPS: dict[str, Callable[[Job, JobResult, EventCallback, threading.Event], None]] = {
    "lower": _lower, "repro": repro_step, "check": _check, "memory": _memory, "schedule": schedule_step,
    "numerics": _numerics, "evaluate": evaluate_step, "run": _run, "profile": _run, "export": _export,
    "selftest": selftest_step, "doctor": doctor_step}
