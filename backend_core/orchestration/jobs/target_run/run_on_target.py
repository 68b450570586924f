"""The `run` step: plan -> build -> simulate -> judge, one ModelRunResult.

- plan (plan.py): the board, checkout, CMSIS-NN and simulator resolved once (`prepare_run`, which a
  job does before it lowers), then the program (the lower step's, or a ready .pte/.bpte), the op check,
  an MCU's fit, the pre-flight gate, the debug buffer, host files, pools and heap (`plan_run`);
- build (build.py): the ExecuTorch libraries (cached) and the runner;
- simulate (simulate.py): QEMU or the FVP, the UART parsed, the run's files;
- judge (judge.py): the outcome (decided in backend_core.target.judge.outcome only), memory, per-layer
  gaps, the verdict, the profile.
Each sub-step reports through `on_line(stream, line)` and `on_step(name)` (backend_core.common.protocol.RUN_STEPS)
and honours `cancel_event`. The pieces live in the feature packages (boards, toolchain, build, simulate,
judge, memory, preflight, profile), none of which imports this one.

Outcome: PASS / FAIL, FAULT, TIMEOUT, RAN (a plain .pte ran to the end: nothing to compare with), NO
RESULT (no TEST line: the runner stopped early); errors before the run are exceptions (BadInputError
exit 2, BuildError / SimulatorError exit 3, Cancelled)."""
from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Any, Callable

from backend_core.target.judge.run_result import ModelRunResult
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.target.simulate.simulator import EventCallback
from backend_core.target.toolchain.process import LineCallback
from backend_core.orchestration.jobs.target_run.build import build_for_run
from backend_core.orchestration.jobs.target_run.judge import attach_gaps, judge_result
from backend_core.orchestration.jobs.target_run.plan import RunEnvironment, RunPlan, plan_run, prepare_run
from backend_core.orchestration.jobs.target_run.program import model_file
from backend_core.orchestration.jobs.target_run.simulate import simulate_run
from backend_core.orchestration.jobs.spec import RunOptions

__all__ = ["run_on_target", "prepare_run", "plan_run", "model_file", "attach_gaps", "RunEnvironment", "RunPlan"]


def run_on_target(source: str, *, et_root: str | Path, cmsis_nn: str | Path | None = None,
                  options: RunOptions | None = None, on_line: LineCallback | None = None,
                  on_event: EventCallback | None = None, cancel_event: threading.Event | None = None,
                  workdir: Path | None = None, on_step: Callable[[str], None] | None = None,
                  lowering: PipelineOptions | None = None, lowered: Any = None,
                  environment: RunEnvironment | None = None) -> ModelRunResult:
    """Plan, build, simulate and judge one run of `source` (a model source or a .pte/.bpte).

    `lowered` is what a job's lower step made of `source` with `lowering` (used as it is: the run, its
    pre-flight and its profile do not lower again); `environment` is the job's `prepare_run` (else it is
    prepared here, once)."""
    opts = options or RunOptions()
    lowering = lowering or PipelineOptions(target=opts.target, flow=opts.flow)
    emit = on_line or (lambda stream, line: None)
    step = on_step or (lambda name: None)
    cancel_event = cancel_event or threading.Event()
    env = environment or prepare_run(opts, et_root, cmsis_nn, on_line, on_event, cancel_event)
    workdir = workdir or Path(tempfile.mkdtemp(prefix="cmlens-run-"))
    plan = plan_run(source, opts, lowering, env, workdir, lowered=lowered, emit=emit, step=step)
    libs, runner = build_for_run(plan, on_line=on_line, cancel_event=cancel_event, step=step)
    step("run")
    result, files = simulate_run(plan, runner.elf, emit, on_line=on_line, on_event=on_event,
                                 cancel_event=cancel_event)
    run = judge_result(plan, libs, runner, result, files, emit, step)
    step("results")
    return run
