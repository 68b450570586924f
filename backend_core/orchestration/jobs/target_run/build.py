"""The run's build sub-step: the ExecuTorch libraries for the plan's CPU (cached) and the runner with the
plan's program, sizes and board (the "libraries" and "build runner" run steps)."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

from backend_core.target.build.libraries import EtLibraries, ensure_libraries
from backend_core.target.build.runner import RunnerBuild, RunnerRequest, build_runner
from backend_core.common.errors import BuildError
from backend_core.target.toolchain.process import LineCallback
from backend_core.orchestration.jobs.target_run.plan import RunPlan


def build_for_run(plan: RunPlan, *, on_line: LineCallback | None, cancel_event: threading.Event,
                  step: Callable[[str], None]) -> tuple[EtLibraries, RunnerBuild]:
    """(libraries, runner); BuildError with the linker's overflow beside the fit verdict for an MCU."""
    opts, sizing = plan.options, plan.sizing
    start = time.monotonic()
    step("libraries")
    libs = ensure_libraries(plan.environment.libraries, on_line=on_line, cancel_event=cancel_event)
    plan.timings["libraries_s"] = time.monotonic() - start
    rreq = RunnerRequest(sizing.board, libs, model=None if sizing.host_files else plan.model, ops=plan.check.model_ops,
                         semihosting=sizing.host_files, etdump=opts.etdump, debug_buffer_size=sizing.debug_size,
                         dump_intermediate_outputs=opts.etdump, atol=plan.atol, rtol=opts.rtol,
                         method_pool=sizing.pools[0], temp_pool=sizing.pools[1], heap_size=sizing.heap,
                         build_root=_runner_root(opts))
    step("build runner")
    try:
        rb = build_runner(rreq, on_line=on_line, cancel_event=cancel_event)
    except BuildError as exc:
        if sizing.sized is not None:
            from backend_core.target.build.board_fit import explain_link_failure

            explain_link_failure(exc, sizing.sized)
        raise
    plan.timings["runner_configure_s"], plan.timings["runner_build_s"] = rb.configure_s, rb.build_s
    return libs, rb


def _runner_root(opts: Any) -> Path | None:
    return opts.runner_root or (None if opts.cache_root is None else Path(opts.cache_root) / "runner")
