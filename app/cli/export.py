"""`cmlens export MODEL --board BOARD | --target CPU -o DIR`: a bundle that drops into the user's own
bare-metal CMake project (the program as a C array, a C API with exact static pools, the selective op
list, CMake, a report), and with --check its proof on QEMU, bit for bit against the lowered program.

Parse -> Job (backend_core.orchestration.jobs.steps.export.export_job: steps lower, check, memory, export) -> submit
(InProcessExecutor) -> render. Exit 0 written (and PASS with --check), 1 --check FAIL, 2 bad input
(unknown board/CPU, missing checkout, a model that does not fit, a pre-flight "will fail", a folder
that is not an earlier bundle), 3 a stage, build or run failure, 130 cancelled."""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from backend_core.common.cpus import DEFAULT_TARGET

from .common import add_board_size_flags, guarded, line_printer, lower_request_from, submit, write_json
from .outputs import FOLDER, add_output
from .lowering_flags import add_lowering_flags


def add_export_command(sub: Any) -> None:
    p = sub.add_parser(
        "export", help="a firmware bundle for your own project: C array, C API, static pools, op list, CMake",
        description="Lower MODEL (cached) and write a folder for your bare-metal CMake project: model.pte and "
                    "model_pte.h (an aligned const array in a named section), cmlens_model.h/.cpp (init, run, "
                    "I/O shapes, dtypes, int8 scale/zero point; every pool static and sized exactly from the "
                    "memory plan), model_ops.txt (the selective op list), cmlens_model.cmake/CMakeLists.txt "
                    "(ExecuTorch's libraries for the CPU with only those ops, from your checkout), README.md and "
                    "bundle.json. --check builds an example main.c that uses only the bundle's API, runs it on "
                    "QEMU and compares its outputs with the lowered program bit for bit.")
    p.add_argument("model", metavar="MODEL", help="zoo name, path/to/model.py[:NAME], .pt2, or a .pte/.bpte")
    p.add_argument("--board", metavar="NAME", help="fit the bundle to this board (`cmlens memory --board list`)")
    add_board_size_flags(p)
    add_lowering_flags(p, "target", "flow", "calib", "keep-going", "rewrite", "no-cache", "schedule", "input-dtype",
                       target_default=None)
    add_output(p, "-o", "--output", kind=FOLDER, metavar="DIR", required=True, help="the bundle folder (written all or nothing)")
    p.add_argument("--force", action="store_true", help="replace DIR even when it is not an earlier bundle")
    p.add_argument("--check", action="store_true", help="build the example firmware, run it on QEMU and compare "
                                                        "its outputs with the lowered program bit for bit")
    p.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout (default: $EXECUTORCH_ROOT)")
    p.add_argument("--cmsis-nn", metavar="PATH", help="CMSIS-NN source tree (default: $CMSIS_NN_PATH)")
    add_output(p, "--json", metavar="F", help="write the job's export section as JSON")
    p.add_argument("--quiet", action="store_true", help="hide the build's output lines")
    p.add_argument("--verbose", "-v", action="store_true")
    p.set_defaults(func=run_export_command)


def _target(args: argparse.Namespace) -> str:
    from backend_core.common.boards.specs import board_named
    from backend_core.common.cpus import normalise_target

    if args.target:
        return normalise_target(args.target)
    if args.board:
        core = board_named(args.board).core            # unknown board: BadInputError, exit 2
        if core:
            return normalise_target(core)
    return DEFAULT_TARGET


def export_lines(section: dict[str, Any]) -> list[str]:
    """What the terminal shows of a written bundle."""
    mem, pools = section["memory"], section["pools"]
    planned = ", ".join(f"{p['bytes']:,}" for p in pools["planned"])
    out = [f"bundle: {section['folder']} ({len(section['files'])} files)",
           f"  flash: model.pte {mem['model_flash_bytes']:,} B; RAM pools {pools['ram_bytes']:,} B "
           f"(planned {planned or '-'}, method allocator "
           f"{pools['method_allocator']['bytes']:,}, temp {pools['temp_allocator']['bytes']:,})",
           f"  ops ({len(section['selected_ops'])}, selective build): {', '.join(section['selected_ops'])}"]
    fit = section.get("board_fit")
    if fit:
        out.append(f"  board fit: {'fits' if fit['fits'] else 'DOES NOT FIT'} (RAM free {fit['ram_free_bytes']:,} B"
                   + (f", flash free {fit['flash_free_bytes']:,} B" if fit.get("flash_free_bytes") is not None else "") + ")")
    if section.get("workarounds"):
        out.append("  " + section["workarounds"])
    s = section.get("schedule")
    if s:
        from backend_core.target.memory.fit import kib

        where = f"{s['split']} in {s['grid'][0]}×{s['grid'][1]} patches" if s["split"] else "no patches"
        out.append(f"  schedule: {where}, {s['input_dtype']} input: total RAM {kib(s['total_ram_bytes'])} (unscheduled "
                   f"{kib(s['unscheduled_total_ram_bytes'])}), +{100 * s['extra_macs']:.1f} % MACs; schedule.json in "
                   "the bundle" + ("; the input is int8: cmlens_model_quantize_input does the quantize step"
                                   if s.get("input_quant") else ""))
    return out


def export_job_from(args: argparse.Namespace) -> Any:
    """The Job `cmlens export` submits for these arguments (the window builds the same one)."""
    from backend_core.orchestration.jobs import ExportOptions, MemoryOptions
    from backend_core.orchestration.jobs.steps.export import export_job

    from .lowering_flags import schedule_options

    args.target = _target(args)                # the board's core when --target is left out
    schedule = schedule_options(args, None, args.target, write=False)    # shipped in the bundle: schedule.json
    command = "cmlens export " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if sys.argv[1:2] == ["export"] else \
        f"cmlens export {args.model} -o {args.output}"
    return export_job(args.model, lower_request_from(args),
                      args.board, ExportOptions(output=args.output, force=args.force, check=args.check,
                                                command=command), args.et_root, args.cmsis_nn,
                      MemoryOptions(ram=args.ram, flash=args.flash), schedule)


def _not_checked(section: dict[str, Any], res: Any, json_file: Path | None) -> int:
    """Stopped during --check: the bundle is written and whole, its proof is not; say exactly that."""
    from backend_core.orchestration.jobs.steps.export import NOT_CHECKED

    from . import interrupt

    for line in export_lines(section):
        print(line, file=sys.stdout)
    code = interrupt.exit_code()
    print(f"cancelled ({interrupt.signal_name()}): {NOT_CHECKED}", file=sys.stderr)
    write_json(json_file, {"status": "cancelled", "message": NOT_CHECKED, "export": section, "exit_code": code})
    return code


def run_export_command(args: argparse.Namespace) -> int:
    out, err = sys.stdout, sys.stderr
    json_file = Path(args.json) if args.json else None

    def work() -> int:
        job = export_job_from(args)
        on_line = line_printer(out, args.quiet)

        def on_event(kind: str, data: dict) -> None:
            if kind == "line":
                on_line(data["stream"], data["line"])
            elif kind == "status":
                print(f"… {data['text']}", file=err, flush=True)

        res = submit(job, on_event)
        section = res.steps.get("export")
        if res.status == "cancelled" and section is not None:
            return _not_checked(section, res, json_file)
        res.raise_error()
        for line in export_lines(section):
            print(line, file=out)
        code = 0
        check = section.get("check")
        if check is not None:
            degenerate = " (on degenerate outputs: see the warnings)" if check.get("warnings") else ""
            print(f"check: {check['verdict']}{degenerate}", file=out)
            code = 0 if check["verdict"] == "PASS" else 1 if check["verdict"] == "FAIL" else 3
        write_json(json_file, {"export": section, "exit_code": code})
        return code

    return guarded(work, err, json_file)
