"""The run's judge sub-step: one ModelRunResult from the plan, the build and the simulator's result, its
memory measured against the prediction, per-layer gaps (the "gaps" run step), the verdict, and the
profile when asked. What the run's outcome is, is decided in backend_core.target.judge.outcome only."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from backend_core.target.build.libraries import EtLibraries
from backend_core.target.build.runner import RunnerBuild
from backend_core.target.judge.outcome import run_outcome, run_problem
from backend_core.target.judge.run_result import ModelRunResult
from backend_core.target.judge.verdict import judge_run
from backend_core.target.memory.target_check import check_run
from backend_core.target.simulate.simulator import SimResult
from backend_core.target.toolchain.process import LineCallback
from backend_core.orchestration.jobs.steps.classes import attach_classes, store_profile
from backend_core.orchestration.jobs.steps.profile import attach_profile
from backend_core.orchestration.jobs.target_run.plan import RunPlan


def judge_result(plan: RunPlan, libs: EtLibraries, rb: RunnerBuild, result: SimResult, files: dict[str, Path],
                 emit: LineCallback, step: Callable[[str], None]) -> ModelRunResult:
    """The run's result with its verdict (and gaps, profile); a failure after the run is reported on it."""
    opts, sizing, model, source = plan.options, plan.sizing, plan.model, plan.source
    outcome = run_outcome(result, model.suffix)
    run = ModelRunResult(Path(source).stem if Path(source).suffix else source, sizing.board.cpu, sizing.board, outcome,
                         result.exit_code, plan.check, result, rb.elf, plan.timings, libs.cached, libs.cold_build_s,
                         run_problem(result), files)
    run.memory = check_run(sizing.prediction, result.report.memory, *sizing.pools, elf=rb.elf,
                           baked_model_bytes=0 if sizing.host_files else model.stat().st_size)
    if run.memory is not None and sizing.sized is not None:
        from backend_core.target.build.board_fit import fit_check

        run.memory["board_fit"] = fit_check(sizing.sized, rb.elf, result.report.memory.board)
        run.memory["lines"] += run.memory["board_fit"]["lines"]
    if run.memory and run.memory["problem"]:
        run.problem = run.memory["problem"] + (f" ({run.problem})" if run.problem else "")
    run.reference_warnings = plan.reference_warnings
    if outcome == "FAIL" and result.report.error_stats and not plan.references.exact_reference:
        from backend_core.stages.pipeline.reference_check import fail_hint   # --qtol only helps a fake-quant reference
        hint = fail_hint(result.report.error_stats[0].max_absolute_error, plan.steps, opts.qtol)
        if hint:
            run.problem = hint + (f"; {run.problem}" if run.problem else "")
    if opts.etdump:
        step("gaps")
        attach_gaps(run, plan.program.record, opts.gap_metric, emit)
    run.verdict = judge_run(run, model, plan.references, plan.steps, atol=plan.atol, rtol=opts.rtol,
                            etdump=opts.etdump)
    run.outcome = run.verdict.outcome
    for line in run.verdict.lines:
        emit("cmlens", f"verdict: {line}")
    if opts.profile:
        lowered = plan.program.lowered
        attach_profile(run, source, plan.lowering, opts.icount or opts.profile, plan.program.record, emit,
                       final=lowered.final if lowered is not None else None)
        spec = plan.environment.board.spec
        attach_classes(run, emit, plan.class_trace, board=spec.name if spec is not None else None,
                       clock_mhz=opts.clock_mhz,
                       flash_wait_states=opts.flash_wait_states)
        env = plan.environment
        store_profile(run, model, {"model": run.model, "checkout": str(env.checkout.root), "commit": env.checkout.commit,
                                   "cmsis_nn": str(env.cmsis.path) if env.cmsis.path else None,
                                   "qemu_board": plan.board.name}, emit)
    return run


def attach_gaps(run: ModelRunResult, record: Any, metric: str, emit: LineCallback) -> None:
    """Per-layer gaps when the run left an ETDump + debug buffer and we hold the ETRecord; otherwise
    say why. A failure here is reported on the result, not raised: the run itself already happened."""
    if record is None:
        run.gaps_problem = "no ETRecord for a ready-made .pte/.bpte: pass the model source to get per-layer gaps"
        return
    if "etdump.bin" not in run.files or "debug_buffer.bin" not in run.files:
        run.gaps_problem = "the runner printed no ETDump with a debug buffer (did it stop early?)"
        return
    from backend_core.target.judge.gaps_inspector import compute_gaps

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
