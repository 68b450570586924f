"""What every CLI subcommand shares: the JSON result file for the GUI, one way to print a typed
error (message, hint, last output), the streamed-line printer, and Ctrl-C / cancel handling."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, TextIO

from backend_core.common.errors import Cancelled, CmlensError
from backend_core.stages.models.zoo import ZOO

ZOO_EPILOG = "Zoo models (random weights, no download is possible here; digits_cnn is trained):\n" + "\n".join(
    f"  {name:18s} {entry.description}" for name, entry in ZOO.items())


def write_json(path: Path | None, data: dict) -> None:
    """The GUI reads this file after the process ends: no parsing of interleaved stdout. Written whole
    or not at all (an interrupted run leaves no half file)."""
    if path is not None:
        from backend_core.common.files import write_atomic

        write_atomic(path, json.dumps(data, indent=2, default=str))


def print_error(exc: CmlensError, err: TextIO | None = None, json_file: Path | None = None,
                verbose: bool | None = None) -> int:
    """The one error printer of the CLI: the cause and the fix, never a traceback. `exc.detail` (a build's
    last output, a traceback) follows as "last output" by default; `verbose=False` (a command whose detail
    is a traceback: lower, numerics, repro) keeps it for -v. Returns the error's exit code."""
    err = err or sys.stderr
    if isinstance(exc, Cancelled):
        return print_cancelled(exc.message, err, json_file)
    write_json(json_file, {"error": {"message": exc.message, "hint": exc.hint, "detail": exc.detail,
                                     "type": type(exc).__name__}, "exit_code": exc.exit_code})
    print(f"error: {exc.message}", file=err)
    if exc.hint:
        print(f"  {exc.hint}", file=err)
    if exc.detail and verbose is not False:
        print(exc.detail if verbose else "--- last output ---\n" + exc.detail, file=err)
    return exc.exit_code


def print_cancelled(where: str, err: TextIO | None = None, json_file: Path | None = None) -> int:
    """A stopped run says what it reached and claims nothing else; exit 130 (Ctrl-C) or 143 (SIGTERM)."""
    from . import interrupt

    err = err or sys.stderr
    code = interrupt.exit_code()
    write_json(json_file, {"status": "cancelled", "message": where, "exit_code": code})
    print(f"cancelled ({interrupt.signal_name()}): {where}. No result.", file=err)
    return code


def cancelled_where(res) -> str:
    """Where a cancelled job stopped, in words: the step, and the last lowering stage that finished."""
    step = (res.error or {}).get("step") or "job"
    low = res.lowering
    snaps = list(getattr(low, "snapshots", None) or [])
    planned = list(getattr(low, "planned_stages", None) or [])
    if step == "lower" and low is not None:
        reached = f"after stage '{snaps[-1].stage}' ({len(snaps)} of {len(planned)})" if snaps else "before the first stage"
        return f"stopped during the lowering, {reached}"
    return f"stopped during the {step} step"


def submit(job, on_event=None):
    """The one road of a subcommand: submit `job` to the in-process executor and wait. Ctrl-C or SIGTERM
    cancels it (app/cli/interrupt.py); the cancelled result comes back like any other."""
    from backend_core.orchestration.execute.inprocess import run_in_process

    return run_in_process(job, on_event)


def guarded(work: Callable[[], int], err: TextIO | None = None, json_file: Path | None = None) -> int:
    """Run a subcommand's work: Cancelled / Ctrl-C exit 130 (143 after SIGTERM), typed errors print their
    cause and fix."""
    err = err or sys.stderr
    try:
        return work()
    except Cancelled as exc:
        return print_cancelled(exc.message, err, json_file)
    except KeyboardInterrupt:
        return print_cancelled("interrupted", err, json_file)
    except CmlensError as exc:
        return print_error(exc, err, json_file)


def add_protocol_flag(parser) -> None:
    """`--protocol`: also write backend_core.common.protocol `step` lines on stdout (the GUI's progress)."""
    parser.add_argument("--protocol", action="store_true",
                        help="also print machine-readable step lines (JSON, one per line) for the GUI")


def step_emitter(args, out: TextIO) -> Callable[[str], None] | None:
    """on_step for the run flow: a protocol `step` line per step with --protocol, else nothing."""
    if not getattr(args, "protocol", False):
        return None
    from backend_core.common import protocol

    return lambda name: protocol.emit({"type": protocol.STEP, "step": name}, out)


def line_printer(out: TextIO, quiet: bool) -> Callable[[str, str], None]:
    """Echo streamed lines. The simulator driver has already fed the full line to the UART parser;
    what is printed is abbreviated (the ETDump's base64 lines are 100+ kB each)."""
    from backend_core.target.simulate.uart import abbreviate_line

    def on_line(stream: str, line: str) -> None:
        line = abbreviate_line(line)
        if stream == "uart":
            print(f"uart> {line}", file=out, flush=True)
        elif stream in ("cmlens", "progress"):       # progress: a build's "N% (done/total steps)" lines
            print(f"cmlens: {line}", file=out, flush=True)
        elif stream == "stderr" and not quiet:
            print(f"  ! {line}", file=out, flush=True)
        elif not quiet:
            print(f"  | {line}", file=out, flush=True)
    return on_line


def add_board_size_flags(parser) -> None:
    """--ram/--flash: a board made of sizes instead of --board NAME (the memory fit verdict on it), one text
    for every command that takes them (the unknown-board message suggests them)."""
    parser.add_argument("--ram", metavar="SIZE", help="RAM size instead of a board (e.g. 256K, 1M)")
    parser.add_argument("--flash", metavar="SIZE", help="flash size instead of a board (e.g. 1M)")


def lower_request_from(args, **overrides):
    """The lowering flags every command shares, read once into the job's LowerRequest (a flag a command
    does not have takes its default). `overrides`: fields a command sets itself (memory's per-CPU target)."""
    from backend_core.orchestration.jobs import LowerRequest

    calib = getattr(args, "calib", None)
    fields = dict(target=args.target, flow=getattr(args, "flow", "legacy"),
                  activations=getattr(args, "activations", "int8"),
                  channels_last=bool(getattr(args, "channels_last", False)), calib=calib,
                  verify_suggestions=bool(getattr(args, "verify_suggestions", False)),
                  use_cache=not getattr(args, "no_cache", False), keep_going=bool(getattr(args, "keep_going", False)),
                  rewrites=tuple(dict.fromkeys(getattr(args, "rewrite", None) or ())))
    fields.update(overrides)
    return LowerRequest(**fields)


def print_schedule(res, out: TextIO) -> None:
    """A job's schedule step as every command prints it: the floors, the front, the chosen schedule, the
    scheduled program's fit on the board, and the files written (jobs/outputs.py wrote them)."""
    from backend_core.analyses.schedule.report import schedule_lines
    from backend_core.target.memory.fit import kib

    sched = res.steps["schedule"]
    print("", file=out)
    for line in schedule_lines(sched):
        print(line, file=out)
    v = (sched.get("memory") or {}).get("verdict")
    if v is not None:
        name = (sched["memory"].get("board") or {}).get("name", "the board")
        print(f"scheduled program on {name}: " + (f"FITS — {kib(v['ram_free_bytes'])} RAM free" if v["fits"] else
                                                  "DOES NOT FIT — " + "; ".join(v["problems"])), file=out)
    if res.files.get("schedule"):
        print(f"wrote schedule: {res.files['schedule']}", file=out)
    if res.files.get("scheduled_bpte"):
        print(f"wrote scheduled program: {res.files['scheduled_bpte']} (expected outputs: the unscheduled "
              "program's; `cmlens run` on that file judges it on a target)", file=out)
