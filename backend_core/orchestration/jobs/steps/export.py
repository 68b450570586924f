"""The export step (`cmlens export`, the window's "Export firmware bundle…"): the lower step's program,
checked and sized by the job's check and memory steps, written as a bundle for the user's firmware
(backend_core.target.export), then, with --check, proven on QEMU.

A job that exports runs steps lower, check, memory, export (`export_job` builds it). What can be wrong
without lowering (the board or CPU, the checkout, CMSIS-NN, the output folder) is checked by
`prepare_export` before the lowering (jobs/execute_job.py), so a bad flag is exit 2 in a second. After the
lowering: a model that does not fit the board is refused with the verdict's numbers, a pre-flight
"will fail" finding is refused unless the lowering was made with --keep-going (then the bundle holds the
rewritten program and its report names the workarounds); portable fallbacks export with a warning."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError, Cancelled
from backend_core.orchestration.jobs.result import JobResult
from backend_core.orchestration.jobs.spec import (
    ExportOptions, Job, LowerRequest, MemoryOptions, RunOptions, ScheduleOptions)

EventCallback = Callable[[str, dict[str, Any]], None]

# What a bundle whose --check was stopped says, in bundle.json, README.md, the terminal and the window:
# the files are complete and correct (written all or nothing before the check), only the proof is missing.
NOT_CHECKED = "bundle written, not checked: rerun with --check"


@dataclass
class ExportEnvironment:
    target: str
    board: Any                 # BoardSpec or None
    checkout: Any              # toolchain.checkout.Checkout
    cmsis: Any                 # toolchain.checkout.CmsisNn
    output: Path


def export_job(model: str, lower: LowerRequest, board: str | None, options: ExportOptions,
               et_root: str | None, cmsis_nn: str | None, memory: MemoryOptions | None = None,
               schedule: ScheduleOptions | None = None) -> Job:
    """The job `cmlens export` (and the window) submits; `memory` carries --ram/--flash (a board of sizes);
    `schedule` (--schedule): the bundle ships the scheduled program, its pools sized from its own plan."""
    steps = ("lower", "check", "memory", "export") + (("schedule",) if schedule is not None else ())
    return Job(model, lower, steps=steps, board=board, run=RunOptions(et_root=et_root, cmsis_nn=cmsis_nn),
               export=options, memory=memory or MemoryOptions(), schedule=schedule or ScheduleOptions())


def prepare_export(job: Job) -> ExportEnvironment:
    """Everything the export needs that can be wrong before the lowering: BadInputError (exit 2)."""
    import os

    from backend_core.common.cpus import normalise_target
    from backend_core.target.export import check_destination
    from backend_core.target.toolchain.checkout import find_cmsis_nn, inspect_checkout

    opts = job.export
    if not opts.output:
        raise BadInputError("No output folder for the bundle.", "Pass -o DIR.")
    target = normalise_target(job.lower.target)
    board = job.memory_board()              # --board NAME, or --ram/--flash (a board of sizes), or None
    if board is not None and board.core and normalise_target(board.core) != target:
        raise BadInputError(f"{board.name} has a {board.core}, the model is lowered for {target}.",
                            f"Pass --target {board.core} (or leave --target out with --board).")
    out = Path(opts.output).expanduser().absolute()
    check_destination(out, opts.force)
    et_root = job.run.et_root or os.environ.get("EXECUTORCH_ROOT")
    if not et_root:
        raise BadInputError("No ExecuTorch checkout: the bundle's CMake and kernel list are made against it.",
                            "Pass --et-root PATH (or set EXECUTORCH_ROOT).")
    checkout = inspect_checkout(et_root)
    checkout.require_buildable()
    cmsis = find_cmsis_nn(job.run.cmsis_nn or os.environ.get("CMSIS_NN_PATH"), checkout)
    if opts.check and job.reads_program and not job.model.endswith(".bpte"):
        raise BadInputError("--check needs the expected outputs of a .bpte (or a model source to lower).",
                            "Pass the model source or its .bpte, or drop --check.")
    return ExportEnvironment(target, board, checkout, cmsis, out)


def _program(job: Job, res: JobResult) -> tuple[bytes, bytes | None]:
    """(the .pte to ship, the .bpte with the expected outputs or None): after a schedule step, the scheduled
    program and its bundle (expected outputs: the unscheduled program's)."""
    from backend_core.target.build.ops import program_bytes

    if res.lowering is not None and "scheduled.bpte" in res.lowering.blobs:
        return res.lowering.blobs["scheduled.pte"], res.lowering.blobs["scheduled.bpte"]
    if res.lowering is not None:
        bpte = res.lowering.blobs.get("model.bpte")
        pte = program_bytes(bpte) if bpte else res.lowering.blobs["model.pte"]
        return pte, bpte
    data = Path(job.model).read_bytes()
    return program_bytes(data), data if data[4:6] == b"BP" else None


def _refuse_unfit(mem: dict[str, Any]) -> None:
    v = mem.get("verdict")
    if v is not None and not v["fits"]:
        board = (mem.get("board") or {}).get("name", "the board")
        raise BadInputError(f"The model does not fit {board}: " + "; ".join(v["problems"] or ["see `cmlens memory`"]) + ".",
                            "Pick a larger board, or make the model smaller (`cmlens memory` shows what takes the room).")


def _refuse_certain(job: Job, res: JobResult) -> list[dict[str, Any]]:
    """The pre-flight's findings as dicts; BadInputError when one says the program will fail."""
    rep = res.preflight
    findings = [f for f in (rep.findings if rep is not None else []) if not f.rule.startswith("memory")]
    certain = [f for f in findings if f.certain]
    if certain:
        again = " even with --keep-going" if job.lower.keep_going else ""
        raise BadInputError("The pre-flight says this program will fail on the target" + again + ": "
                            + "; ".join(f"{f.node or '(program)'} [{f.rule}] {f.message}" for f in certain),
                            "Export with --keep-going: the bundle then holds a rewritten program that runs "
                            "(its report names the workarounds)." if not again else certain[0].fix)
    return [f.to_dict() for f in findings]


def export_step(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    """Write the bundle (and prove it with --check); res.steps["export"]."""
    from backend_core.target.export import BundleSpec, write_bundle
    from backend_core.target.export.bundle import update_report
    from backend_core.target.export.report import complete_runtime
    from backend_core.stages.fallback.changed import keep_going_summary
    from backend_core.common.versions import stack_versions
    from backend_core.orchestration.jobs.steps.export_speed import bundle_speed

    env = prepare_export(job)
    sched = res.steps.get("schedule")
    mem = (sched or {}).get("memory") or res.steps.get("memory") or {}    # the program shipped: the scheduled one
    _refuse_unfit(mem)
    findings = _refuse_certain(job, res)
    pte, bpte = _program(job, res)
    lowering = res.lowering
    fallbacks = [{"node": n.id, "op": n.target} for n in (lowering.fallbacks() if lowering is not None else [])]
    islands = mem.get("float_islands") or []
    cost = (f"Float activations on those ops: {sum(i['float_bytes'] for i in islands):,} B at most "
            f"({sum(i['extra_vs_int8'] for i in islands):,} B more than int8)." if islands else "")
    if fallbacks:
        emit("line", {"stream": "cmlens", "line": f"warning: {len(fallbacks)} op(s) run on portable kernels: "
                      + ", ".join(f"{f['node']} ({f['op']})" for f in fallbacks) + (f". {cost}" if cost else "")})
    spec = BundleSpec(
        model=lowering.model if lowering is not None else Path(job.model).stem, target=env.target,
        et_root=env.checkout.root, et_commit=env.checkout.commit, cmsis_nn=env.cmsis.path, cmsis_tag=env.cmsis.fetch_tag,
        command=job.export.command or f"cmlens export {job.model} -o {job.export.output}",
        board=env.board.to_dict() if env.board is not None else None, board_fit=mem.get("verdict"),
        runtime=complete_runtime(mem.get("runtime")), fallbacks=fallbacks, fallback_cost=cost,
        workarounds=keep_going_summary(lowering.verdicts) if lowering is not None else "",
        findings=findings, versions=stack_versions(), flatc=_flatc(env.checkout.root),
        speed=bundle_speed(pte, env.target, job.board, job.model) if sched is None else None,
        schedule=schedule_facts(sched))
    emit("status", {"text": f"writing the bundle to {env.output}"})
    bundle = write_bundle(pte, spec, env.output, force=job.export.force, bpte=bpte)
    section: dict[str, Any] = {"folder": str(bundle.folder), "files": sorted(p.name for p in bundle.folder.iterdir()),
                               "pools": bundle.info["pools"], "memory": bundle.info["memory"],
                               "selected_ops": bundle.info["selective_build"]["ops"], "fallbacks": fallbacks,
                               "workarounds": spec.workarounds, "board_fit": spec.board_fit, "check": None,
                               "schedule": bundle.info.get("schedule")}
    res.steps["export"] = section
    if job.export.check:
        try:
            section["check"] = _check(job, env, bundle, bpte, emit, cancel)
        except Cancelled:
            # Ctrl-C during the proof: keep the bundle (it is whole), and say in its report that it is unproven
            section["check"] = {"verdict": "NOT CHECKED", "summary": NOT_CHECKED}
            update_report(bundle, section["check"])
            raise
        update_report(bundle, section["check"])


def schedule_facts(sched: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the bundle says of its schedule (bundle.json `schedule`, README's "Schedule", schedule.json)."""
    if sched is None:
        return None
    c = sched["chosen"]
    return {"document": sched["schedule"], "split": c["split"], "grid": c["grid"], "input_dtype": c["input_dtype"],
            "input_quant": c.get("input_quant"), "planner": c["planner"], "total_ram_bytes": c["total_ram_bytes"],
            "unscheduled_total_ram_bytes": sched["plain"]["total_ram_bytes"], "extra_macs": c["extra_macs"],
            "copy_bytes": c["copy_bytes"], "flash_delta": c["flash_delta"], "bit_exact_on_host": c.get("bit_exact")}


def _flatc(et_root: Path) -> str | None:
    from backend_core.target.build.speed import wheel_flatc

    return wheel_flatc(et_root)


def _exercise_sets(job: Job, io_inputs: list[dict[str, Any]], emit: EventCallback) -> list[Any]:
    """The model's own calibration or evaluation samples as check inputs ([]: generated ones are used)."""
    if job.reads_program:
        return []
    from backend_core.target.export.exercise import model_sets
    from backend_core.stages.models import load_model, parse_model_source

    try:
        return model_sets(load_model(parse_model_source(job.model)), io_inputs)
    except Exception as exc:  # noqa: BLE001  an extra: generated inputs stand in, and the check says which ran
        emit("line", {"stream": "cmlens", "line": f"note: the model's own samples could not be read for --check "
                      f"({type(exc).__name__}: {str(exc)[:120]}): generated inputs are used"})
        return []


def _check(job: Job, env: ExportEnvironment, bundle: Any, bpte: bytes | None, emit: EventCallback,
           cancel: threading.Event) -> dict[str, Any]:
    from backend_core.common.boards.resolve import resolve_run_board
    from backend_core.target.export.check import run_check

    if bpte is None:
        raise BadInputError("--check needs the expected outputs of a .bpte.", "Pass the model source or its .bpte.")
    rb = resolve_run_board(env.target, "qemu", job.board)
    run_board = rb.board
    mem = bundle.info["memory"]
    runtime = mem.get("runtime_estimate")
    if rb.mcu and bundle.info.get("board_fit") and runtime:
        # the MCU's own regions laid out on the QEMU board of its core, sections where the fit verdict put
        # them (boards/sized.py, as `cmlens run --board` does): the link itself checks that the firmware fits
        from backend_core.common.boards.sized import sized_board
        from backend_core.target.build.paths import cache_dir

        run_board = sized_board(rb.spec, bundle.info["board_fit"], cache_dir() / "boards", stack=runtime["stack"],
                                heap=runtime["heap"], base=rb.board)
    emit("status", {"text": f"--check: building the example firmware for {run_board.name} and running it on QEMU"})
    import shutil
    import tempfile

    extra = _exercise_sets(job, bundle.info["io"]["inputs"], emit)
    work = Path(tempfile.mkdtemp(prefix="cmlens-export-check-"))
    try:
        result = run_check(bundle.folder, bpte, bundle.info, run_board, et_root=env.checkout.root,
                           cmsis_nn=env.cmsis.path, work=work, cancel_event=cancel, extra=extra,
                           on_line=lambda stream, line: emit("line", {"stream": stream, "line": line}))
    finally:
        if not job.keep or "elf" not in job.keep:
            shutil.rmtree(work, ignore_errors=True)
    for line in result.lines():
        emit("line", {"stream": "cmlens", "line": line})
    return result.to_dict()
