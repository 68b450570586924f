"""The two steps that run no model: `selftest` (build the self-test firmware and run it on the simulator: it
proves the toolchain and the simulator without ExecuTorch) and `doctor` (which tools, simulators and checkout
are there, and the command that installs what is missing). Steps of a Job like any other, so the window
carries them out in its job worker process, with the same cancel and events as a run on target."""
from __future__ import annotations

import threading
from dataclasses import asdict
from typing import Any, Callable

from backend_core.orchestration.jobs.result import JobResult
from backend_core.orchestration.jobs.spec import Job

EventCallback = Callable[[str, dict[str, Any]], None]
SELFTEST_MAX_TIMEOUT = 60.0          # the window's cap (app/firmware/tool_runs.py)


def selftest_step(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    """`res.steps["selftest"]`: the self-test's result (outcome, UART, ELF, the console summary, the exit code);
    its build and UART lines and its steps (protocol.SELFTEST_STEPS) go out as "line" and "run_step" events.
    The run options' cache_root is the build root (`cmlens selftest --build-dir`), their icount QEMU's."""
    from backend_core.target.doctor.selftest import run_selftest

    opts = job.run_options()
    result = run_selftest(opts.target, opts.sim, opts.timeout, variant=job.selftest, build_root=opts.cache_root,
                          on_line=lambda stream, line: emit("line", {"stream": stream, "line": line}),
                          on_step=lambda name: emit("run_step", {"name": name}), cancel_event=cancel,
                          icount=opts.icount)
    data = asdict(result)
    data["elf"] = str(result.elf)
    data["summary"] = result.summary()
    data["exit_code"] = 0 if result.passed else 1 if result.outcome == "FAIL" else 3
    res.steps["selftest"] = data


def doctor_step(job: Job, res: JobResult, emit: EventCallback, cancel: threading.Event) -> None:
    """`res.steps["doctor"]`: the doctor's report of this machine (and of the run options' checkout)."""
    from backend_core.target.doctor.machine import run_doctor

    report = run_doctor(et_root=job.run.et_root or None, cmsis_nn=job.run.cmsis_nn or None)
    res.steps["doctor"] = {**report.to_dict(), "exit_code": 0 if report.ok else 2}
