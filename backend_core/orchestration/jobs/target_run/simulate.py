"""The run's simulate sub-step (the "run" run step): the runner on the plan's simulator, reading its model
through semihosting or with the model baked in; the ETDump blocks of the UART and the files the runner
wrote, as files for the judge and the Inspector."""
from __future__ import annotations

import threading
from pathlib import Path

from backend_core.common.errors import SimulatorError
from backend_core.target.simulate.semihosting import run_semihosting
from backend_core.target.simulate.simulator import EventCallback, QemuRunner, SimResult
from backend_core.target.toolchain.process import LineCallback
from backend_core.target.build.paths import cache_dir
from backend_core.target.simulate.log_buffer import log_buffer_shim
from backend_core.orchestration.jobs.steps.classes import TraceReader, trace_log_path
from backend_core.orchestration.jobs.target_run.plan import RunPlan


def simulate_run(plan: RunPlan, elf: Path, emit: LineCallback, *, on_line: LineCallback | None = None,
                 on_event: EventCallback | None = None,
                 cancel_event: threading.Event | None = None) -> tuple[SimResult, dict[str, Path]]:
    """(the simulator's result, the run's files by name); SimulatorError when the simulator could not run
    the runner at all (exit 3). The simulator is the plan's (found and checked by prepare_run), bound to
    this run's line and event callbacks and its cancel event."""
    sim = plan.environment.simulator_for(on_line, on_event, cancel_event)
    reader = None
    if isinstance(sim, QemuRunner):               # QEMU logs every block it runs: counts by class
        sim.trace_log = None
        if plan.options.profile and plan.options.classes:
            reader = TraceReader(trace_log_path(plan.workdir), elf, plan.board.cpu)
            sim.trace_log = reader.log
            sim.log_shim, why = log_buffer_shim(cache_dir())
            if why:
                emit("cmlens", f"note: {why}")
    try:
        if plan.sizing.host_files:
            result = run_semihosting(sim, elf, plan.model, plan.workdir, plan.options, emit)
        else:
            emit("cmlens", "$ " + " ".join(sim.command(elf)))
            result = sim.run(elf, timeout=plan.options.timeout)
    finally:
        if reader is not None:
            plan.class_trace = reader.finish()
    plan.timings["run_s"] = result.elapsed_s
    if result.exit_code not in (0, None) and not result.uart and result.problem:
        raise SimulatorError(f"The simulator could not run the runner: {result.problem}")
    for block in result.report.etdumps:          # the UART's base64 blocks, as files for the Inspector
        for name, data in block.files.items():
            (plan.workdir / name).write_bytes(data)
    workdir = plan.workdir
    files = {p.name: p for p in sorted(workdir.glob("out-*.bin")) + [workdir / "etdump.bin",
                                                                      workdir / "debug_buffer.bin"]
             if p.is_file()}
    return result, files
