"""The run step's plan: everything a run on a board needs, resolved ONCE before anything is built.

Two parts, because a job checks what can be wrong before it lowers (a missing checkout or tool is exit 2
in a second, not after minutes of lowering) and the rest needs the lowered program:
- `prepare_run` -> RunEnvironment: the board (one resolution: boards.resolve), the checkout, CMSIS-NN,
  the library request and the simulator;
- `plan_run` -> RunPlan: the program (the lower step's, or a ready .pte/.bpte), its references and
  tolerance, the op check, an MCU's fit and sized board, the pre-flight gate, the debug buffer, host
  files, pools and heap.
The build, simulate and judge sub-steps (build.py, simulate.py, judge.py) read the plan and
resolve nothing again."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from backend_core.common.boards.resolve import RunBoard, resolve_run_board
from backend_core.target.build.libraries import EtLibRequest, is_built
from backend_core.target.build.ops import OpCheck, check_checkout_ops
from backend_core.target.build.paths import cache_dir
from backend_core.target.judge.references import References
from backend_core.target.judge.run_result import MissingOpsError
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.target.simulate.simulator import EventCallback, FvpRunner, QemuRunner, runner_for
from backend_core.target.toolchain import checkout as checkout_mod
from backend_core.target.toolchain.checkout import Checkout, find_cmsis_nn, inspect_checkout, unseen_warnings
from backend_core.target.toolchain.process import LineCallback
from backend_core.orchestration.jobs.target_run.program import RunProgram, expected_outputs, program_for_run
from backend_core.orchestration.jobs.target_run.sizing import RunSizing, size_run
from backend_core.orchestration.jobs.spec import RunOptions


@dataclass
class RunEnvironment:
    """What a run needs that can be wrong before any work (BadInputError / ToolMissingError, exit 2)."""

    board: RunBoard
    checkout: Checkout
    cmsis: Any                       # toolchain.checkout.CmsisNn: a local tree or the pinned download
    libraries: EtLibRequest
    simulator: QemuRunner | FvpRunner   # found and checked (require) before any work
    icount: bool = False

    def simulator_for(self, on_line: LineCallback | None, on_event: EventCallback | None,
                      cancel_event: threading.Event | None) -> QemuRunner | FvpRunner:
        """The checked simulator, with a run's callbacks and cancel event (a job checks the environment
        before its run step exists)."""
        sim = self.simulator
        if (sim.on_line, sim.on_event, sim.cancel_event) == (on_line, on_event, cancel_event):
            return sim
        return runner_for(self.board.board, on_line=on_line, on_event=on_event,
                          cancel_event=cancel_event or threading.Event(), icount=self.icount)


def prepare_run(opts: RunOptions, et_root: str | Path, cmsis_nn: str | Path | None,
                on_line: LineCallback | None = None, on_event: EventCallback | None = None,
                cancel_event: threading.Event | None = None) -> RunEnvironment:
    """The board, the checkout, CMSIS-NN and the simulator, each checked. A job does this before it lowers
    and hands the result to the run (jobs/execute_job.py), so nothing here happens twice."""
    emit = on_line or (lambda stream, line: None)
    board = resolve_run_board(opts.target, opts.sim, opts.board)   # UnsupportedTargetError / BadInputError: exit 2
    if opts.profile:                                               # --clock-mhz / --flash-wait-states: exit 2
        from backend_core.target.timing.estimate import check_request

        check_request(board.board.cpu, board.spec.name if board.spec else None, opts.clock_mhz,
                      opts.flash_wait_states)
    checkout: Checkout = inspect_checkout(et_root)                 # BadInputError: exit 2
    checkout.require_buildable()                                   # submodules, directory name: exit 2
    for w in unseen_warnings(checkout, Path(opts.cache_root) if opts.cache_root is not None else cache_dir()):
        emit("cmlens", f"warning: {w}")                            # once per checkout; doctor always
    cmsis = find_cmsis_nn(cmsis_nn, checkout)
    lib_req = EtLibRequest(checkout.root, board.board.cpu, opts.build_type, cmsis.path,
                           cache_root=opts.cache_root, commit=checkout.commit, etdump=True)
    sim = runner_for(board.board, on_line=on_line, on_event=on_event,
                     cancel_event=cancel_event or threading.Event(), icount=opts.icount or opts.profile)
    sim.require()                                                  # ToolMissingError before a long build
    if cmsis.path is None and not is_built(lib_req):
        if not checkout_mod.can_reach():
            raise checkout_mod.offline_cmsis_nn_error(cmsis.fetch_tag)   # not 20 s into the configure
        emit("cmlens", f"note: {cmsis.note}")
    return RunEnvironment(board, checkout, cmsis, lib_req, sim, icount=opts.icount or opts.profile)


@dataclass
class RunPlan:
    """One run, decided: what is built, with which sizes, run how, and judged against what."""

    source: str
    options: RunOptions
    lowering: PipelineOptions
    environment: RunEnvironment
    program: RunProgram              # the .pte/.bpte, its lowering and ETRecord
    references: References           # what the expected outputs are (judge/references.py)
    steps: list[float | None]        # the outputs' quantisation steps
    atol: float                      # --atol, plus --qtol output steps
    reference_warnings: list[str]
    check: OpCheck                   # the program's ops against the checkout
    sizing: RunSizing                # board (sized for an MCU), fit, host files, debug buffer, pools, heap
    workdir: Path
    timings: dict[str, float] = field(default_factory=dict)
    class_trace: Any = None          # TraceReader.finish() of a profiled QEMU run (instructions by class)

    @property
    def board(self) -> Any:
        """The board the firmware is built for and run on (an MCU's sizes on its QEMU board)."""
        return self.sizing.board

    @property
    def model(self) -> Path:
        return self.program.model


def plan_run(source: str, opts: RunOptions, lowering: PipelineOptions, env: RunEnvironment, workdir: Path, *,
             lowered: Any = None, emit: LineCallback, step: Callable[[str], None]) -> RunPlan:
    """The plan for running `source`: the "lower" and "check ops" run steps, then the sizes. Raises what
    stops a run before any build (MissingOpsError, DoesNotFitError, PreflightError, BadInputError)."""
    step("lower")
    program = program_for_run(source, opts, lowering, workdir, emit, lowered)
    step("check ops")
    references, warnings, steps, atol = expected_outputs(program.model, opts, emit)
    check = check_checkout_ops(program.model, env.checkout.root)
    emit("cmlens", f"ops: {check.summary()}")
    if not check.ok:
        raise MissingOpsError(check)
    sizing = size_run(source, program, opts, lowering, env.board, check, emit)
    return RunPlan(source, opts, lowering, env, program, references, steps, atol, warnings, check, sizing, workdir,
                   {"lower_s": program.seconds})
