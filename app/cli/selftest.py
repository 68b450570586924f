"""`cmlens selftest`: build the self-test firmware (no ExecuTorch) and run it on QEMU or an FVP.

Exit status: 0 PASS, 1 FAIL, 2 bad input or missing tool, 3 build or run failure, 130 cancelled."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from backend_core.common.cpus import DEFAULT_TARGET, TARGETS

from .common import add_protocol_flag, guarded, line_printer, step_emitter, write_json
from .outputs import add_json_output, json_destination


def add_selftest_command(subparsers: argparse._SubParsersAction) -> None:
    from backend_core.target.doctor.selftest import VARIANTS

    s = subparsers.add_parser(
        "selftest", help="build the self-test firmware and run it on a simulator",
        description="Cross-compile the self-test firmware (int8 arithmetic, FPU/DSP/MVE checks, cycle "
                    "counter; no ExecuTorch needed) for a Cortex-M CPU and run it on QEMU or a Corstone "
                    "FVP. Exit 0 PASS, 1 FAIL, 2 bad input or missing tool, 3 build/run failure.")
    s.add_argument("--sim", choices=("qemu", "fvp"), default="qemu", help="simulator (default: qemu)")
    s.add_argument("--target", default=DEFAULT_TARGET, metavar="CPU",
                   help=f"CPU, one of {', '.join(TARGETS)} (default: {DEFAULT_TARGET})")
    s.add_argument("--timeout", type=float, default=30.0, metavar="S",
                   help="stop the simulator after S seconds (default: 30)")
    s.add_argument("--firmware", choices=tuple(VARIANTS), default="selftest",
                   help="selftest (default), or a diagnostic firmware: selftest-fail reports a FAIL, "
                        "hang never ends, fault / fault-udf crash on purpose")
    s.add_argument("--build-dir", type=Path, metavar="DIR",
                   help="root of the build directories (default: ~/.cache/cmlens/build)")
    s.add_argument("--icount", action="store_true",
                   help="QEMU -icount: the workload tick counts become instructions executed (deterministic; "
                        "not cycles)")
    s.add_argument("--quiet", action="store_true", help="do not echo build output")
    add_json_output(s, "also write the result (or the error) as JSON to F")
    add_protocol_flag(s)
    s.set_defaults(func=cmd_selftest)


def cmd_selftest(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Build + run the self-test, streaming build and UART output; returns the exit status. The work is the
    selftest step of a model-less Job (the window's Self-test button submits the same Job)."""
    from backend_core.common.boards.table import board_for
    from backend_core.orchestration.jobs.spec import Job, LowerRequest, RunOptions

    from .common import submit

    out, err = out or sys.stdout, err or sys.stderr
    on_line = line_printer(out, getattr(args, "quiet", False))
    on_step = step_emitter(args, out)
    json_file, json_stdout = json_destination(args, err)

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "line":
            on_line(data["stream"], data["line"])
        elif kind == "run_step" and on_step:
            on_step(data["name"])

    def work() -> int:
        board = board_for(args.target, args.sim)
        print(f"cmlens: self-test '{args.firmware}' for {board.cpu} on {board.name} ({board.simulator}), "
              f"time limit {args.timeout:g} s", file=out, flush=True)
        job = Job("", LowerRequest(target=args.target), steps=("selftest",), selftest=args.firmware,
                  run=RunOptions(sim=args.sim, timeout=args.timeout, cache_root=args.build_dir,
                                 icount=getattr(args, "icount", False)))
        res = submit(job, on_event)
        res.raise_error()
        data = dict(res.steps["selftest"])
        code = int(data.pop("exit_code"))
        print("-" * 60, file=out)
        print(data.pop("summary"), file=out)
        if json_stdout:
            print(json.dumps(data, indent=2, default=str), file=out)
        write_json(json_file, {**data, "exit_code_cli": code})
        return code

    return guarded(work, err, json_file)
