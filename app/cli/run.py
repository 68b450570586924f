"""`cmlens run`: lower a model, build ExecuTorch's Arm runner with it and run it on a simulator.

Exit status: 0 PASS, 1 FAIL, 2 bad input or missing tool (the message has the install command),
3 build or run failure (fault, hang, no result), 130 cancelled."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from backend_core.common.cpus import DEFAULT_TARGET, TARGETS
from backend_core.stages.fallback.changed import keep_going_summary

from .common import (add_protocol_flag, cancelled_where, guarded, line_printer, lower_request_from, print_cancelled,
                     step_emitter, submit, write_json)
from .outputs import add_json_output, add_output, json_destination
from .lowering_flags import add_lowering_flags


def _pool(args, name: str) -> int | None:
    """--method-pool / --temp-pool as bytes (BadInputError for a garbled or negative size: exit 2)."""
    value = getattr(args, name, None)
    if value in (None, ""):
        return None
    from backend_core.common.boards.specs import parse_size

    return parse_size(value, f"--{name.replace('_', '-')}")


def add_run_command(subparsers: argparse._SubParsersAction) -> None:
    r = subparsers.add_parser(
        "run", help="lower a model, build ExecuTorch's Arm runner with it and run it on a simulator",
        description="Lower MODEL to a bundled program (.bpte, reference outputs from the quantized model) or "
                    "take a .pte/.bpte, check its operators against the ExecuTorch checkout, build the "
                    "checkout's libraries for the CPU (once per CPU, cached; 5-11 min measured on 2 cores) and its stock "
                    "arm_executor_runner on the kernels/ board layer, run it on QEMU or a Corstone FVP and "
                    "report PASS/FAIL, error stats, cycles and ETDump. Exit 0 PASS, 1 FAIL, 2 bad input or "
                    "missing tool, 3 build/run failure.")
    r.add_argument("model", metavar="MODEL", help="zoo name, path/to/model.py[:NAME], .pt2, or a .pte/.bpte")
    r.add_argument("--sim", choices=("qemu", "fvp"), default="qemu", help="simulator (default: qemu)")
    add_lowering_flags(r, "target", "flow", "calib", "keep-going", "rewrite", "schedule", "input-dtype",
                       target_default=None)
    r.add_argument("--board", metavar="NAME", default=None,
                   help="link the firmware into this board's RAM and flash (any board of `cmlens memory --board "
                        "list`; an MCU runs on the QEMU board with its core: M7 mps2-an500, M4 mps2-an386, M33 "
                        "mps2-an505, M55 mps3-an547). A firmware the fit verdict says does not fit is stopped "
                        "before the build with the verdict's numbers")
    r.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout (default: $EXECUTORCH_ROOT)")
    r.add_argument("--cmsis-nn", metavar="PATH",
                   help="CMSIS-NN source tree (default: $CMSIS_NN_PATH; else ExecuTorch's CMake downloads it)")
    r.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="stop the simulator after S seconds (default: 120)")
    r.add_argument("--skip-preflight", action="store_true",
                   help="build and run even when the pre-flight check (`cmlens check`) says it will fail")
    r.add_argument("--semihosting", action="store_true",
                   help="build a runner that reads the model from the host (once per op set: a new model with "
                        "the same ops needs no rebuild) instead of baking the model in")
    r.add_argument("--etdump", action="store_true",
                   help="also dump every intermediate output into the ETDump (debug_buffer.bin; the libraries "
                        "always have the event tracer)")
    r.add_argument("--tight", action="store_true",
                   help="size the runner's method allocator and temp pools from the memory prediction "
                        "(cmlens memory) instead of the 60 MiB / 2 MiB defaults")
    r.add_argument("--method-pool", metavar="SIZE", default=None,
                   help="force the method allocator pool size (e.g. 24K); the pre-flight says if it is too small")
    r.add_argument("--temp-pool", metavar="SIZE", default=None, help="force the temp allocator pool size")
    r.add_argument("--etdump-uart", action="store_true",
                   help="with --etdump on QEMU: send the ETDump as base64 on the UART, as on an FVP or a board "
                        "(default on QEMU: host files through semihosting, seconds faster)")
    r.add_argument("--atol", type=float, default=0.0,
                   help="BundleIO absolute tolerance (default 0: the expected outputs are the lowered program run on "
                        "the host, which a correct target matches bit for bit)")
    r.add_argument("--rtol", type=float, default=0.0, help="BundleIO relative tolerance (default 0)")
    r.add_argument("--qtol", type=int, default=0, metavar="N",
                   help="relax --atol by N quantization steps of the output, for a .bpte whose expected outputs are "
                        "a fake-quant model's (ExecuTorch's own Cortex-M tests use qtol 1 for LUT activations); a bundle "
                        "cmlens made needs none (default 0)")
    r.add_argument("--cache-dir", type=Path, metavar="DIR",
                   help="cache of library and runner builds (default: ~/.cache/cmlens)")
    r.add_argument("--quiet", action="store_true", help="do not echo build output")
    r.add_argument("--gap-metric", choices=("MSE", "L1", "SNR"), default="MSE",
                   help="with --etdump: the Inspector distance of the per-layer gaps (default MSE)")
    r.add_argument("--profile", action="store_true",
                   help="per-op profile from the runner's ETDump events: top ops, kernel kinds, fallback "
                        "islands' share. On QEMU this turns on -icount: the counts are instructions executed "
                        "(QEMU -icount), not cycles, identical on every run; on the FVP, its cycle counts "
                        "(not trusted for absolute timing)")
    r.add_argument("--max-instructions", type=int, metavar="N",
                   help="exit 1 when the inference executes more than N instructions (QEMU -icount; implies "
                        "--profile): a deterministic CI gate")
    add_estimate_flags(r)
    add_json_output(r, "also write the result (or the error) as JSON to F")
    add_output(r, "--html", metavar="F", default=None,
               help="write a standalone HTML report: the lowering with its graphs and the run, with --profile its "
                    "per-op profile and cycle estimate (ms per op and per fallback island, the clock and wait states "
                    "used, the estimate's error)")
    add_protocol_flag(r)
    from .history_flags import add_record_flags

    add_record_flags(r)
    r.set_defaults(func=cmd_run)



def add_estimate_flags(r: argparse.ArgumentParser) -> None:
    """--clock-mhz and --flash-wait-states, declared once (run, profile)."""
    r.add_argument("--clock-mhz", type=float, metavar="MHZ",
                   help="with --profile: the clock of the cycle estimate's milliseconds (default: the board's, "
                        "resources/timing/boards.json); outside the core's range is refused")
    r.add_argument("--flash-wait-states", type=int, metavar="N",
                   help="with --profile: the board's flash wait states for the cycle estimate (default: the "
                        "board's at its clock, resources/timing/boards.json)")


def board_target(args: argparse.Namespace) -> str:
    """--target, else the --board's core, else the default; BadInputError (exit 2) for an unknown board."""
    from backend_core.common.cpus import normalise_target

    board = getattr(args, "board", None)
    if not board:
        return normalise_target(args.target or DEFAULT_TARGET)
    from backend_core.common.boards.specs import board_named

    spec = board_named(board)
    if not args.target and getattr(args, "sim", "qemu") == "qemu" and not spec.simulated:
        from backend_core.common.boards.sized import QEMU_STAND_IN

        if spec.core in QEMU_STAND_IN:              # an M85 MCU: lowered and run as the M55 on QEMU
            return QEMU_STAND_IN[spec.core]
    return normalise_target(args.target or (spec.core if spec.core in TARGETS else DEFAULT_TARGET))


def cmd_run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Lower + build + run MODEL on a simulator, streaming build output and UART lines."""
    import os

    from backend_core.orchestration.jobs import Job

    out, err = out or sys.stdout, err or sys.stderr
    json_file, json_stdout = json_destination(args, err)
    et_root = args.et_root or os.environ.get("EXECUTORCH_ROOT")
    if not et_root:
        return _no_checkout(json_file, err)
    budget = getattr(args, "max_instructions", None)
    if budget is not None and (budget <= 0 or args.sim != "qemu"):
        why = ("--max-instructions needs a positive N" if budget <= 0 else
               "--max-instructions counts instructions, which only QEMU -icount gives (the FVP's cycles are "
               "not trusted)")
        write_json(json_file, {"error": {"message": why, "type": "BadInput",
                                          "hint": "use --sim qemu and a positive N"}, "exit_code": 2})
        print(f"error: {why}.", file=err)
        return 2
    overrides = [f for f, v in (("--clock-mhz", getattr(args, "clock_mhz", None)),
                                ("--flash-wait-states", getattr(args, "flash_wait_states", None))) if v is not None]
    if overrides and not getattr(args, "profile", False) and budget is None:
        why = f"{' and '.join(overrides)} set{'s' if len(overrides) == 1 else ''} the cycle estimate of --profile"
        write_json(json_file, {"error": {"message": why, "type": "BadInput", "hint": "add --profile"},
                               "exit_code": 2})
        print(f"error: {why}, and --profile is not given.\n  Add --profile (the estimate needs its per-op "
              "instruction counts).", file=err)
        return 2
    from backend_core.common.errors import CmlensError

    try:
        method_pool, temp_pool = _pool(args, "method_pool"), _pool(args, "temp_pool")
    except CmlensError as exc:
        from .common import print_error

        return print_error(exc, err, json_file)
    if getattr(args, "board", None) or args.target is None:
        from backend_core.common.errors import CmlensError

        try:
            args.target = board_target(args)
        except CmlensError as exc:
            from .common import print_error

            return print_error(exc, err, json_file)
    opts = _run_options(args, et_root, budget, method_pool, temp_pool)
    # callers that build their own Namespace may leave calib / keep_going out; a run's lowering is cached
    from .history_flags import recorded_steps

    try:
        schedule = _schedule(args, json_file)
    except CmlensError as exc:
        from .common import print_error

        return print_error(exc, err, json_file)
    steps = recorded_steps(args, ("schedule", "run") if schedule is not None else ("run",))
    job = Job(args.model, lower_request_from(args, channels_last=False, activations="int8", use_cache=True,
                                             verify_suggestions=False), steps=steps,
              run=opts, outputs={"html": args.html} if getattr(args, "html", None) else None,
              **({"schedule": schedule} if schedule is not None else {}))
    print(f"cmlens: run {args.model} for {args.target} on {args.sim}, checkout {et_root}", file=out, flush=True)

    return guarded(lambda: _execute(job, args, out, err, json_file, json_stdout, budget), err, json_file)


def _schedule(args: argparse.Namespace, json_file: Any) -> Any:
    """--schedule: the scheduled program is what is built and run, judged against the unscheduled one's
    outputs. BadInputError (exit 2) for what cannot go with it, before any work."""
    from backend_core.common.errors import BadInputError

    from .lowering_flags import schedule_options

    schedule = schedule_options(args, json_file or getattr(args, "html", None), args.target)
    if schedule is None:
        return None
    from backend_core.stages.models.sniff import is_program_path

    if is_program_path(args.model):
        raise BadInputError(f"--schedule rewrites a lowering; {args.model} is a ready program.",
                            "Give the model source, or run the .scheduled.bpte an earlier --schedule wrote as it is.")
    if getattr(args, "etdump", False):
        raise BadInputError("--etdump does not go with --schedule: the ETRecord is the unscheduled lowering's.",
                            "Drop --etdump (the verdict is bit for bit against the unscheduled program).")
    return schedule


def _no_checkout(json_file: Any, err: TextIO) -> int:
    """No ExecuTorch checkout named: exit 2 with how to get one."""
    write_json(json_file, {"error": {"message": "no ExecuTorch checkout", "type": "NoCheckout",
                                      "hint": "pass --et-root PATH (or set EXECUTORCH_ROOT)"},
                            "exit_code": 2})
    print("error: no ExecuTorch checkout: pass --et-root PATH (or set EXECUTORCH_ROOT).", file=err)
    from backend_core.target.toolchain.checkout import ARM_BUILD_SUBMODULES, cmsis_nn_clone_command

    print("The runner and its libraries are built from the sources of a checkout:\n"
          "  git clone https://github.com/pytorch/executorch && cd executorch && "
          "git submodule update --init " + " ".join(ARM_BUILD_SUBMODULES) + "\n"
          "Offline, also pass --cmsis-nn PATH (" + cmsis_nn_clone_command(None) + ", then check out "
          "the commit backends/cortex_m/CMakeLists.txt pins).", file=err)
    return 2


def _run_options(args: argparse.Namespace, et_root: str, budget: int | None, method_pool: Any, temp_pool: Any) -> Any:
    """The run step's options from the command line (callers that build their own Namespace may leave some out)."""
    from backend_core.orchestration.jobs import RunOptions

    return RunOptions(target=args.target, sim=args.sim, timeout=args.timeout, etdump=args.etdump,
                      atol=args.atol, rtol=args.rtol, flow=args.flow, cache_root=args.cache_dir,
                      semihosting=args.semihosting, gap_metric=getattr(args, "gap_metric", "MSE"),
                      profile=bool(getattr(args, "profile", False)) or budget is not None,
                      etdump_uart=bool(getattr(args, "etdump_uart", False)), qtol=getattr(args, "qtol", 0),
                      preflight=not getattr(args, "skip_preflight", False),
                      tight=bool(getattr(args, "tight", False)), method_pool=method_pool, temp_pool=temp_pool,
                      et_root=et_root, cmsis_nn=args.cmsis_nn, board=getattr(args, "board", None),
                      clock_mhz=getattr(args, "clock_mhz", None),
                      flash_wait_states=getattr(args, "flash_wait_states", None))


def _execute(job: Any, args: argparse.Namespace, out: TextIO, err: TextIO, json_file: Any, json_stdout: bool,
             budget: int | None) -> int:
    """Carry out the run's job, print its verdict (and the instruction budget), write --json, record --record."""
    on_line, on_step = line_printer(out, args.quiet), step_emitter(args, out) or (lambda name: None)

    def on_event(kind: str, data: dict) -> None:
        if kind == "line":
            on_line(data["stream"], data["line"])
            if data["stream"] == "progress" and getattr(args, "protocol", False):
                _emit_progress(data["line"], out)
        elif kind == "run_step":
            on_step(data["name"])
        elif kind == "status":
            on_line("cmlens", data["text"])

    res = submit(job, on_event)
    if res.status == "cancelled":
        return print_cancelled(cancelled_where(res), err, json_file)
    from .history_flags import record_if_asked

    record_if_asked(args, res, source="run")  # --record: a failure too, with its cause
    res.raise_error()                        # bad input / build / run errors: their cause and fix
    result = res.run
    if "schedule" in res.steps:
        from .common import print_schedule

        print_schedule(res, out)
    print("-" * 60, file=out)
    print(result.summary(), file=out)
    changed = keep_going_summary(getattr(res.lowering, "verdicts", None)
                                 or (res.steps.get("lower") or {}).get("quantizer"))
    if changed:                    # the program that ran is the tool's workaround: say so with the verdict
        print(changed, file=out)
    code = 0 if result.passed else 1 if result.outcome == "FAIL" else 3
    over = ""
    if budget is not None:
        from backend_core.target.profile.run import over_budget

        over = over_budget(result.profile, budget)
        print(f"instruction budget {budget:,}: " + (f"EXCEEDED: {over}" if over else "within"), file=out)
        code = 1 if over and code == 0 else code
    if res.files.get("html"):
        print(f"wrote html: {res.files['html']}", file=out)
    if json_stdout:
        print(json.dumps(result.to_dict(), indent=2, default=str), file=out)
    write_json(json_file, {**result.to_dict(), "exit_code_cli": code,
                           **({"budget": {"max_instructions": budget, "exceeded": bool(over),
                                          "message": over}} if budget is not None else {})})
    return code


def _emit_progress(text: str, out) -> None:
    """A build's percentage line as a protocol `progress` message (the GUI's progress bar)."""
    from backend_core.common import protocol
    from backend_core.target.build.speed import parse_progress

    p = parse_progress(text)
    if p is not None:
        protocol.emit({"type": protocol.PROGRESS, "phase": "build", "done": p[2], "total": p[3], "text": text}, out)
