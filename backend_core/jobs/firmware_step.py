"""The `run` step: lower a model (or take a .pte/.bpte) -> check its ops against the checkout ->
pre-flight -> build the ExecuTorch libraries (cached) and the runner -> run on QEMU or the FVP -> parse
the UART -> one ModelRunResult, with per-layer gaps and the profile when asked. Each step reports
through `on_line(stream, line)` and `on_step(name)` and honours `cancel_event`.

This is the composition; every piece it calls lives in the feature packages below (firmware, memory,
preflight, profile, pipeline), none of which imports this one.

Outcome: PASS / FAIL (a BundleIO comparison failed), FAULT, TIMEOUT, RAN (a plain .pte ran to the end:
nothing to compare with), NO RESULT (no TEST line: the runner stopped early); errors before the run are
exceptions (BadInputError exit 2, BuildError / SimulatorError exit 3, Cancelled)."""
from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from ..errors import BadInputError, StageFailedError, BuildError, SimulatorError
from ..toolchain import checkout as checkout_mod
from ..boards.table import board_for
from ..build.paths import cache_dir
from ..toolchain.checkout import Checkout, find_cmsis_nn, inspect_checkout, unseen_warnings
from ..build.debug_buffer import check_fits, plan_for_model, read_program
from ..build.libraries import EtLibRequest, ensure_libraries, is_built
from ..build.ops import check_checkout_ops
from ..toolchain.process import LineCallback
from ..judge.run_result import MissingOpsError, ModelRunResult
from ..build.runner import RunnerRequest, build_runner
from ..simulate.semihosting import run_semihosting
from ..simulate.simulator import EventCallback, runner_for
from .lower_step import lower_source
from ..pipeline.stages import PipelineOptions
from ..memory import board_named as board_named_spec
from ..memory.target_check import check_run, predict_for_run, run_pools
from .etrecord_lowering import lower_with_etrecord, record_of
from .preflight_step import gate
from .profile_step import attach_profile
from .spec import RunOptions
from ..judge.verdict import judge_run
from ..judge.references import References, beside, read_beside


def model_file(source: str, opts: RunOptions, workdir: Path, on_line: LineCallback,
               lowering: PipelineOptions | None = None, lowered: Any = None) -> tuple[Path, float, Any]:
    """A .pte/.bpte for `source`: the file itself, or the .bpte of lowering it, with that LoweringResult.
    `lowered` (a job's lower step, same options) is used as it is: a run lowers its model once."""
    p = Path(source)
    if p.suffix in (".pte", ".bpte"):
        if not p.is_file():
            raise BadInputError(f"Model file {p} does not exist.")
        return p, 0.0, None
    start = time.monotonic()
    if lowered is not None and lowered.status == "done" and "model.bpte" in lowered.blobs:
        res = lowered
    else:
        on_line("cmlens", f"lowering {source} for {opts.target} ({opts.flow} flow)")
        res = lower_source(source, lowering or PipelineOptions(target=opts.target, flow=opts.flow), want_pte=True,
                    want_bpte=True, on_status=lambda s: on_line("cmlens", s))
    if res.status != "done" or "model.bpte" not in res.blobs:
        err = res.error or {}
        raise StageFailedError(err.get("stage", "?"), f"Lowering {source} failed at {err.get('stage', '?')}: {err.get('message', res.status)}",
                            err.get("hint", ""), detail=err.get("traceback", ""))
    out = workdir / f"{res.model}.bpte"
    out.write_bytes(res.blobs["model.bpte"])
    if "references.json" in res.blobs:        # what the expected outputs are (judge/references.py)
        beside(out).write_bytes(res.blobs["references.json"])
    return out, time.monotonic() - start, res


def prepare_run(opts: RunOptions, et_root: str | Path, cmsis_nn: str | Path | None,
                on_line: LineCallback | None = None, on_event: EventCallback | None = None,
                cancel_event: threading.Event | None = None) -> tuple[Any, Checkout, Any, EtLibRequest, Any]:
    """Everything a run needs that can be wrong before any work: the board, the checkout, CMSIS-NN and
    the simulator (BadInputError / ToolMissingError, exit 2). A job checks this before it lowers."""
    emit = on_line or (lambda stream, line: None)
    board = board_for(opts.target, opts.sim)                       # UnsupportedTargetError: exit 2
    if opts.board:                  # a board of `cmlens memory --board list`: its core must be the target's
        from ..boards.resolve import run_board

        board = run_board(opts.board, opts.target, opts.sim, board)   # BadInputError: exit 2
    checkout: Checkout = inspect_checkout(et_root)                 # BadInputError: exit 2
    checkout.require_buildable()                                   # submodules, directory name: exit 2
    for w in unseen_warnings(checkout, Path(opts.cache_root) if opts.cache_root is not None else cache_dir()):
        emit("cmlens", f"warning: {w}")                            # once per checkout; doctor always
    cmsis = find_cmsis_nn(cmsis_nn, checkout)
    lib_req = EtLibRequest(checkout.root, board.cpu, opts.build_type, cmsis.path,
                           cache_root=opts.cache_root, commit=checkout.commit, etdump=True)
    sim = runner_for(board, on_line=on_line, on_event=on_event, cancel_event=cancel_event or threading.Event(),
                     icount=opts.icount or opts.profile)
    sim.require()                                                  # ToolMissingError before a long build
    if cmsis.path is None and not is_built(lib_req):
        if not checkout_mod.can_reach():
            raise checkout_mod.offline_cmsis_nn_error(cmsis.fetch_tag)   # not 20 s into the configure
        emit("cmlens", f"note: {cmsis.note}")
    return board, checkout, cmsis, lib_req, sim


def run_on_target(source: str, *, et_root: str | Path, cmsis_nn: str | Path | None = None,
                  options: RunOptions | None = None, on_line: LineCallback | None = None,
                  on_event: EventCallback | None = None, cancel_event: threading.Event | None = None,
                  workdir: Path | None = None, on_step: Callable[[str], None] | None = None,
                  lowering: PipelineOptions | None = None, lowered: Any = None) -> ModelRunResult:
    """Lower (or take) a model, check its ops, build libraries + runner, run it, attach gaps.

    `on_step(name)` is called as each of backend_core.protocol.RUN_STEPS begins (the GUI's progress).
    `lowered` is what a job's lower step made of `source` with `lowering` (a LoweringResult holding the
    .bpte; for --etdump one with its live programs, which the .bpte and ETRecord are made from): used as
    it is, so the run, its pre-flight and its profile do not lower the model again."""
    opts = options or RunOptions()
    lowering = lowering or PipelineOptions(target=opts.target, flow=opts.flow)
    emit = on_line or (lambda stream, line: None)
    step = on_step or (lambda name: None)
    cancel_event = cancel_event or threading.Event()
    board, checkout, cmsis, lib_req, sim = prepare_run(opts, et_root, cmsis_nn, on_line, on_event, cancel_event)
    workdir = workdir or Path(tempfile.mkdtemp(prefix="cmlens-run-"))
    timings: dict[str, float] = {}

    record = None
    step("lower")
    if opts.etdump and Path(source).suffix not in (".pte", ".bpte"):
        if lowered is not None and lowered.status == "done" and lowered.pipeline is not None:
            record = record_of(lowered, workdir, lambda s: emit("cmlens", s))
        else:
            emit("cmlens", f"lowering {source} for {opts.target} ({opts.flow} flow) with an ETRecord")
            record = lower_with_etrecord(source, lowering, workdir, lambda s: emit("cmlens", s))
        model, timings["lower_s"], lowered = record.bpte, record.seconds, record.result
    else:
        model, timings["lower_s"], lowered = model_file(source, opts, workdir, emit, lowering, lowered)
    step("check ops")
    ref_warnings: list[str] = []
    steps: list[float | None] = []
    atol = opts.atol
    references = read_beside(model) if model.suffix == ".bpte" else References()
    if references.exact_reference:
        emit("cmlens", "reference: the lowered program run on the host (PASS means bit-exact)"
                       + (f"; {references.fake_quant_text()}" if references.vs_fake_quant else ""))
    if model.suffix == ".bpte":      # a PASS against near-constant reference outputs proves nothing
        from ..pipeline.reference_check import bundle_warnings, output_steps

        ref_warnings = bundle_warnings(model.read_bytes(), opts.atol)
        for w in ref_warnings:
            emit("cmlens", f"warning: {w}")
        steps = output_steps(read_program(model))
        if opts.qtol and any(steps):
            atol = opts.atol + opts.qtol * max(s for s in steps if s)
            emit("cmlens", f"tolerance: atol {opts.atol:g} + {opts.qtol} x output step {max(s for s in steps if s):.4g} "
                           f"= {atol:.4g} (--qtol)")
    check = check_checkout_ops(model, checkout.root)
    emit("cmlens", f"ops: {check.summary()}")
    if not check.ok:
        raise MissingOpsError(check)
    sized = None
    from ..boards.resolve import is_mcu_board

    if opts.board and is_mcu_board(opts.board):   # an MCU's sizes on the QEMU board of its core
        from ..build.board_fit import plan_board_run, verdict_lines

        if opts.semihosting:
            raise BadInputError("--semihosting does not go with --board: the runner would read the model into "
                                "a host-file pool the MCU does not have.", "Drop --semihosting.")
        board, sized = plan_board_run(model, board_named_spec(opts.board), ops=check.model_ops,
                                      etdump=opts.etdump, refuse=opts.preflight,
                                      on_status=lambda t: emit("cmlens", t))   # DoesNotFitError: exit 2
        for line in verdict_lines(sized):
            emit("cmlens", line)
    if opts.preflight:       # what will fail on the target stops the run here, before any build (exit 2)
        gate(source, model, lowering, opts.board or board.name, emit, lowered=lowered)

    # --etdump on QEMU: the runner writes etdump.bin / debug_buffer.bin to host files through semihosting
    # (seconds of base64 on the UART otherwise: ~16 s for mobilenet_v1_025); FVP and boards keep the UART.
    host_files = opts.semihosting or (opts.etdump and not opts.etdump_uart and board.simulator == "qemu"
                                      and model.suffix == ".bpte" and sized is None)
    debug_size = None
    if opts.etdump:
        dplan = plan_for_model(model)
        check_fits(dplan, board, not host_files, model.stem)   # BadInputError before any build (exit 2)
        debug_size = dplan.buffer_size
        emit("cmlens", f"--etdump: {dplan.outputs} intermediate outputs, {dplan.need_bytes:,} bytes: debug buffer "
                       f"{debug_size / 2**20:.2f} MiB (the runner's default is 2 MiB); "
                       + ("written to host files through semihosting" if host_files else "sent as base64 on the UART"))

    mem_pred = predict_for_run(model, opts.etdump, emit, debug_size, uart_etdump=not host_files)
    pools = run_pools(mem_pred, opts.tight, opts.method_pool, opts.temp_pool, emit)
    if sized is not None:     # the pools the fit verdict placed (a forced size still wins)
        pools = (opts.method_pool or sized["pools"]["method"], opts.temp_pool or sized["pools"]["temp"])
        emit("cmlens", f"memory: {sized['board']['name']}: method allocator pool {pools[0]:,} B, temp pool "
                       f"{pools[1]:,} B, stack {sized['runtime']['stack']:,} B, heap {sized['runtime']['heap']:,} B")

    # newlib's heap sized to what the runner uses (ETDumpGen mallocs the ETDump), not a fixed 1 MiB
    from ..memory.runtime import heap_for

    heap = sized["runtime"]["heap"] if sized is not None else heap_for((mem_pred or {}).get("etdump_bytes"))
    start = time.monotonic()
    step("libraries")
    libs = ensure_libraries(lib_req, on_line=on_line, cancel_event=cancel_event)
    timings["libraries_s"] = time.monotonic() - start

    if host_files and model.suffix != ".bpte":
        raise BadInputError("The semihosting runner needs a .bpte: it takes the inputs from the bundle.",
                            "Pass a model name or a .bpte, or drop --semihosting to bake the .pte in.")
    rreq = RunnerRequest(board, libs, model=None if host_files else model, ops=check.model_ops,
                         semihosting=host_files, etdump=opts.etdump, debug_buffer_size=debug_size,
                         dump_intermediate_outputs=opts.etdump, atol=atol, rtol=opts.rtol,
                         method_pool=pools[0], temp_pool=pools[1], heap_size=heap,
                         build_root=opts.runner_root or (None if opts.cache_root is None
                                                         else Path(opts.cache_root) / "runner"))
    step("build runner")
    try:
        rb = build_runner(rreq, on_line=on_line, cancel_event=cancel_event)
    except BuildError as exc:
        if sized is not None:
            from ..build.board_fit import explain_link_failure

            explain_link_failure(exc, sized)
        raise
    timings["runner_configure_s"], timings["runner_build_s"] = rb.configure_s, rb.build_s

    step("run")
    if host_files:
        result = run_semihosting(sim, rb.elf, model, workdir, opts, emit)
    else:
        emit("cmlens", "$ " + " ".join(sim.command(rb.elf)))
        result = sim.run(rb.elf, timeout=opts.timeout)
    timings["run_s"] = result.elapsed_s
    if result.exit_code not in (0, None) and not result.uart and result.problem:
        raise SimulatorError(f"The simulator could not run the runner: {result.problem}")
    outcome = result.outcome
    if outcome == "PASS" and result.exit_code not in (0, None):
        outcome = "FAIL"
    if (outcome == "NO RESULT" and result.exit_code == 0 and not result.report.errors
            and model.suffix == ".pte"):
        outcome = "RAN"          # a plain .pte has no reference outputs to compare with
    problem = result.problem
    fatal = [e for e in result.report.errors if e.startswith("F [")]
    if result.report.faults and fatal:
        problem = (f"the runner aborted ({fatal[-1].split('] ', 1)[-1]}); ExecuTorch's et_pal_abort traps, "
                   f"which the board layer reports as {result.report.faults[0].kind}")
    files = {}
    for block in result.report.etdumps:          # the UART's base64 blocks, as files for the Inspector
        for name, data in block.files.items():
            (workdir / name).write_bytes(data)
    files = {p.name: p for p in sorted(workdir.glob("out-*.bin")) + [workdir / "etdump.bin",
                                                                      workdir / "debug_buffer.bin"]
             if p.is_file()}
    run = ModelRunResult(Path(source).stem if Path(source).suffix else source, board.cpu, board, outcome,
                         result.exit_code, check, result, rb.elf, timings, libs.cached, libs.cold_build_s,
                         problem, files)
    run.memory = check_run(mem_pred, result.report.memory, *pools, elf=rb.elf,
                           baked_model_bytes=0 if host_files else model.stat().st_size)
    if run.memory is not None and sized is not None:
        from ..build.board_fit import fit_check

        run.memory["board_fit"] = fit_check(sized, rb.elf, result.report.memory.board)
        run.memory["lines"] += run.memory["board_fit"]["lines"]
    if run.memory and run.memory["problem"]:
        run.problem = run.memory["problem"] + (f" ({run.problem})" if run.problem else "")
    run.reference_warnings = ref_warnings
    if outcome == "FAIL" and result.report.error_stats and not references.exact_reference:
        from ..pipeline.reference_check import fail_hint   # --qtol only helps a fake-quant reference
        hint = fail_hint(result.report.error_stats[0].max_absolute_error, steps, opts.qtol)
        if hint:
            run.problem = hint + (f"; {run.problem}" if run.problem else "")
    if opts.etdump:
        step("gaps")
        _attach_gaps(run, record, workdir, opts.gap_metric, emit)
    run.verdict = judge_run(run, model, references, steps, atol=atol, rtol=opts.rtol, etdump=opts.etdump)
    run.outcome = run.verdict.outcome
    for line in run.verdict.lines:
        emit("cmlens", f"verdict: {line}")
    if opts.profile:
        attach_profile(run, source, lowering, opts.icount or opts.profile, record, emit,
                       final=lowered.final if lowered is not None else None)
    step("results")
    return run


def _attach_gaps(run: ModelRunResult, record: Any, workdir: Path, metric: str, emit: LineCallback) -> None:
    """Per-layer gaps when the run left an ETDump + debug buffer and we hold the ETRecord; otherwise
    say why. A failure here is reported on the result, not raised: the run itself already happened."""
    if record is None:
        run.gaps_problem = "no ETRecord for a ready-made .pte/.bpte: pass the model source to get per-layer gaps"
        return
    if "etdump.bin" not in run.files or "debug_buffer.bin" not in run.files:
        run.gaps_problem = "the runner printed no ETDump with a debug buffer (did it stop early?)"
        return
    from ..judge.gaps_inspector import compute_gaps

    emit("cmlens", f"per-layer gaps: Inspector over the ETDump ({metric})")
    start = time.monotonic()
    try:
        run.gaps = compute_gaps(run.files["etdump.bin"], run.files["debug_buffer.bin"], record.etrecord,
                                record.final, metric)
    except Exception as exc:  # noqa: BLE001  ExecuTorch's Inspector raises plain exceptions
        run.gaps_problem = f"Inspector failed: {type(exc).__name__}: {exc}"
        emit("cmlens", f"per-layer gaps failed: {run.gaps_problem}")
    run.timings["gaps_s"] = time.monotonic() - start
    run.files["etrecord.bin"] = record.etrecord
