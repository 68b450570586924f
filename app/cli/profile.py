"""`cmlens profile`: the same model run with profiling on several CPUs' QEMU boards, one per-layer table
with the ratio to the first CPU (scalar vs DSP vs MVE kernels differ a lot). The numbers are
instructions executed (QEMU -icount), not cycles.

Exit status: 0 every run PASSed, 1 a run FAILed (or went over --max-instructions), 2 bad input or a
missing tool, 3 a build or run failure."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from backend_core.common.cpus import normalise_target

from .common import guarded, line_printer, write_json
from .outputs import add_json_output, json_destination
from .lowering_flags import add_lowering_flags

DEFAULT_CPUS = "m4,m7,m33,m55"


def add_profile_command(subparsers: argparse._SubParsersAction) -> None:
    r = subparsers.add_parser(
        "profile", help="per-op instruction counts of a model on several CPUs (QEMU -icount), side by side",
        description="Run MODEL with profiling on the QEMU board of each CPU (like `cmlens run --profile`; the "
                    "ExecuTorch libraries are built once per CPU and cached) and print one table: the "
                    "instructions each layer executed per CPU and the ratio to the first CPU. Instructions "
                    "executed under QEMU -icount, not cycles.")
    r.add_argument("model", metavar="MODEL", help="zoo name, path/to/model.py[:NAME] or .pt2")
    r.add_argument("--cpus", default=None, metavar="LIST",
                   help=f"comma-separated CPUs, the first is the reference (default: {DEFAULT_CPUS})")
    r.add_argument("--board", metavar="NAME",
                   help="profile the core of this board (any board of `cmlens memory --board list`) and estimate "
                        "its milliseconds there; a profile of the same program and CPU made before (by `cmlens run "
                        "--profile` or `cmlens profile`) is used from the cache, with no checkout or build")
    from .run import add_estimate_flags

    add_estimate_flags(r)
    r.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout (default: $EXECUTORCH_ROOT)")
    r.add_argument("--cmsis-nn", metavar="PATH", help="CMSIS-NN source tree (default: $CMSIS_NN_PATH)")
    add_lowering_flags(r, "flow")
    r.add_argument("--timeout", type=float, default=300.0, metavar="S", help="per run (default: 300)")
    r.add_argument("--cache-dir", type=Path, metavar="DIR", help="library and runner cache")
    r.add_argument("--top", type=int, default=10, metavar="N", help="top ops printed per CPU (default 10)")
    r.add_argument("--verbose", action="store_true", help="echo build output and the UART")
    add_json_output(r, "write the table and every profile as JSON to F")
    r.add_argument("--workers", type=int, default=1, metavar="N",
                   help="run the CPUs' jobs on a local pool of N processes (default 1: one after the other, "
                        "here); each builds its own CPU's libraries")
    r.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the CPUs' jobs on a dask.distributed scheduler (as `cmlens sweep --scheduler`)")
    from .history_flags import add_record_flags

    add_record_flags(r)
    r.set_defaults(func=cmd_profile)


def parse_cpus(text: str) -> list[str]:
    """"m4,M55,cortex-m33" -> ["cortex-m4", "cortex-m55", "cortex-m33"]; BadInputError names a bad one."""
    from backend_core.common.errors import BadInputError

    cpus = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            cpu = normalise_target(part if part.lower().startswith("cortex-") else f"cortex-{part.lower()}")
        except BadInputError:
            raise
        except Exception as exc:  # normalise_target's own error text
            raise BadInputError(f"Unknown CPU {part!r}: {exc}", "Use e.g. --cpus m4,m7,m33,m55.") from exc
        if cpu not in cpus:
            cpus.append(cpu)
    if not cpus:
        raise BadInputError("No CPU given.", "Use e.g. --cpus m4,m7,m33,m55.")
    return cpus


def cmd_profile(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    json_file, json_stdout = json_destination(args, err)

    def work() -> int:
        from backend_core.common.errors import BadInputError, CmlensError
        from backend_core.target.profile import compare_cpus, profile_table
        from backend_core.common.boards.table import board_for
        from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions

        et_root = args.et_root or os.environ.get("EXECUTORCH_ROOT")
        if args.board:                                     # the board's core; its cached profile when there is one
            from .profile_board import board_cpu, cached_profile, print_cached

            cpus = [board_cpu(args)]
            stored, _ = cached_profile(args, cpus[0], et_root)
            if stored is not None:
                data = print_cached(args, stored, cpus[0], out)
                if json_stdout:
                    import json

                    print(json.dumps(data, indent=2, default=str), file=out)
                write_json(json_file, data)
                return 0
        else:
            cpus = parse_cpus(args.cpus or DEFAULT_CPUS)
        for cpu in cpus:
            board_for(cpu, "qemu")                         # UnsupportedTargetError before any build
        if not et_root:
            raise BadInputError("No ExecuTorch checkout.", "Pass --et-root PATH (or set EXECUTORCH_ROOT).")
        from backend_core.orchestration.execute import as_completed, open_executor
        from backend_core.target.profile.model import Profile

        opts = RunOptions(sim="qemu", timeout=args.timeout, cache_root=args.cache_dir, profile=True,
                          et_root=et_root, cmsis_nn=args.cmsis_nn, board=args.board, clock_mhz=args.clock_mhz,
                          flash_wait_states=args.flash_wait_states)
        jobs = [Job(args.model, LowerRequest(target=cpu, flow=args.flow), steps=("run", "profile"), run=opts,
                    label=cpu) for cpu in cpus]
        emit = line_printer(out, quiet=False) if args.verbose else None

        def on_event(kind: str, data: dict) -> None:
            if emit is not None and kind == "line":
                emit(data["stream"], data["line"])

        results = {}
        here = not args.scheduler and args.workers <= 1
        with open_executor(scheduler=args.scheduler, workers=args.workers, kind="here" if here else "pool") as ex:
            if here:                    # one CPU after the other in this process, its lines streamed
                for job in jobs:
                    print(f"cmlens: profile {args.model} on {job.label} (QEMU -icount)", file=out, flush=True)
                    results[job.label] = ex.submit(job, on_event).result()
            else:
                print(f"cmlens: profile {args.model} on {', '.join(cpus)} (QEMU -icount) on {ex.describe()}",
                      file=out, flush=True)
                for h in as_completed(ex.map(jobs)):
                    results[h.job.label] = h.result()
        from .history_flags import record_results

        record_results(args, results.values(), source="profile")   # --record: one record per CPU
        profiles, runs, code = [], {}, 0
        for cpu in cpus:
            done = results[cpu]
            if done.exception is not None:
                done.raise_error()
            if done.error:
                raise BadInputError(done.error["message"], done.error.get("hint", "")) \
                    if done.error.get("exit_code") == 2 else CmlensError(done.error["message"], done.error.get("hint", ""))
            res = done.steps["run"]
            problem = res.get("problem") or res.get("profile_problem")
            runs[cpu] = {"outcome": res["outcome"], "problem": problem}
            print(f"{cpu}: {res['outcome']}" + (f" ({res['problem']})" if res.get("problem") else ""), file=out)
            if not (res["outcome"] in ("PASS", "RAN") and res.get("exit_code", 0) == 0):
                code = max(code, 1 if res["outcome"] == "FAIL" else 3)
            if res.get("profile") is None:
                print(f"{cpu}: no profile ({res.get('profile_problem')})", file=out)
                continue
            profile = Profile.from_dict(res["profile"])
            print(profile_table(profile, args.top), file=out)
            profiles.append(profile)
        if not profiles:
            write_json(json_file, {"runs": runs, "exit_code": 3})
            return 3
        table = compare_cpus(profiles)
        print("-" * 60, file=out)
        print(table.table(), file=out)
        data = {"comparison": table.to_dict(), "profiles": [p.to_dict() for p in profiles], "runs": runs, "exit_code": code}
        if json_stdout:
            import json

            print(json.dumps(data, indent=2, default=str), file=out)
        write_json(json_file, data)
        return code

    return guarded(work, err, json_file)

