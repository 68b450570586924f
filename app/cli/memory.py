"""`cmlens memory MODEL`: what the lowered model needs on the microcontroller (flash, planned arena per
memory id, method allocator, temp pool, peak op, largest tensors, float islands) and whether it fits a
board. Usable as a CI gate: exit 0 fits (or no board given), 1 does not fit, 2 bad input, 3 a stage failed.
It runs the same job as every subcommand (backend_core.orchestration.jobs: steps lower + memory, MemoryOptions)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from backend_core.stages.models.sniff import is_program_path
from backend_core.common.cpus import DEFAULT_TARGET, TARGETS

from .common import add_board_size_flags, guarded, print_schedule, submit, write_json
from .outputs import add_output
from .lowering_flags import add_lowering_flags, schedule_options, schedule_output


def add_memory_command(sub: Any) -> None:
    p = sub.add_parser(
        "memory", help="flash / RAM the model needs on the MCU, and whether it fits a board",
        description="Lower MODEL (cached) to a .pte and read ExecuTorch's own memory plan: the planned "
                    "arena per memory id (CMSIS-NN scratch included), what the runtime's method allocator "
                    "takes to load it, the live bytes per op with the peak, and the verdict for a board.",
        epilog="Boards: the QEMU boards and Corstone FVPs of kernels/boards.json and the MCUs of "
               "resources/boards/mcus.json (`--board list`).")
    p.add_argument("model", help="zoo name, path/to/model.py[:NAME], model.pt2, or a .pte/.bpte")
    add_lowering_flags(p, "target", "flow", "no-cache", "schedule", "input-dtype", target_default=None)
    p.add_argument("--board", metavar="NAME", help="check against this board (`--board list` lists them)")
    add_board_size_flags(p)
    p.add_argument("--elf", metavar="F", help="a built runner ELF: the runtime's code, .data/.bss, stack and heap "
                                              "from its sections (arm-none-eabi-size -A) instead of the prediction")
    p.add_argument("--runtime-from", choices=("auto", "libraries", "table"), default="auto",
                   help="where the runtime's size comes from without --elf: this machine's built ExecuTorch "
                        "libraries (a link probe), the shipped table, or auto (libraries when built, else table)")
    p.add_argument("--all-cpus", action="store_true", help="compare the ten Cortex-M CPUs (lowers for each)")
    add_output(p, "--json", metavar="F", help="write {\"memory\": {...}} as JSON")
    p.add_argument("--verbose", "-v", action="store_true")
    p.set_defaults(func=run_memory_command)


def _board(args: argparse.Namespace):
    from backend_core.common.errors import BadInputError
    from backend_core.common.boards.specs import board_named, custom_board

    if args.board and (args.ram or args.flash):
        raise BadInputError("--board and --ram/--flash both given.", "Use one: a board name, or the sizes.")
    if args.board:
        return board_named(args.board)
    if args.ram:
        return custom_board(args.ram, args.flash)
    if args.flash:
        raise BadInputError("--flash without --ram.", "Give both sizes (e.g. --ram 256K --flash 1M) or --board NAME.")
    return None


def _list_boards(out: Any) -> int:
    from backend_core.common.boards.specs import all_boards
    from backend_core.target.memory.fit import kib

    for b in all_boards().values():
        ram = ", ".join(f"{r.name} {kib(r.size)}" for r in b.ram)
        flash = ", ".join(f"{r.name} {kib(r.size)}" for r in b.flash) or "-"
        print(f"{b.name:18} {b.core:12} RAM: {ram}; flash: {flash}", file=out)
        print(f"{'':18} source: {b.source[:150]}", file=out)
    return 0


SUGGEST_GRIDS = (2, 4)      # the narrow search `memory --board` runs on a model that does not fit


def _suggest_schedule(job: Any, board: Any, out: Any, output: str | None) -> dict[str, Any]:
    """The plain program does not fit `board`: the cheapest patch schedule that does (a narrow search,
    SUGGEST_GRIDS at the timeline's split points, as a Job of its own: a live lowering), with the model's
    float input, else with an int8 one (the caller quantizes: said so), or by how much none does. Returns
    what the JSON carries. The schedule found is written to `output` (what --schedule would write)."""
    from dataclasses import replace

    from backend_core.orchestration.jobs.spec import ScheduleOptions
    from backend_core.target.memory.fit import kib

    grids = " and ".join(f"{g}×{g}" for g in SUGGEST_GRIDS)
    print(f"\nmake it fit: searching the cheapest patch schedule that fits {board.name} ({grids} patches)", file=out)
    fit = replace(job, steps=("schedule",), schedule=ScheduleOptions(spec="fit", input_dtype="any",
                                                                     grids=SUGGEST_GRIDS, output=output))
    res = submit(fit, lambda kind, data: print(f"… {data['text']}", file=sys.stderr, flush=True)
                 if kind == "status" else None)
    if res.error:
        print(f"no patch schedule fits: {res.error['message']}", file=out)
        return {"fits": False, "error": res.error}
    s = res.steps["schedule"]
    c, v = s["chosen"], s["memory"]["verdict"]
    if s.get("float_input_short"):
        print(f"  float32 input: no patch schedule fits: {s['float_input_short']}", file=out)
    where = f"{c['split']} in {c['grid'][0]}×{c['grid'][1]} patches" if c["split"] else "no patches"
    caller = " (the caller quantizes: --input-dtype int8)" if c["input_dtype"] == "int8" else ""
    print(f"  {c['input_dtype']} input: fits with a schedule: {where}{caller}: total RAM {kib(c['total_ram_bytes'])} "
          f"(unscheduled {kib(s['plain']['total_ram_bytes'])}), cost +{100 * c['extra_macs']:.1f} % MACs, "
          f"copies {kib(c['copy_bytes'])}, flash {c['flash_delta']:+,} B; {kib(v['ram_free_bytes'])} RAM free "
          f"on {board.name}", file=out)
    on = f"--board {job.board}" if job.board else "--ram/--flash as given"
    print(f"  wrote schedule: {res.files['schedule']}; use it: cmlens run/export {job.model} {on} "
          f"--schedule {res.files['schedule']}", file=out)
    return {"fits": True, "input_dtype": c["input_dtype"], "chosen": c, "verdict": v,
            "float_input_short": s.get("float_input_short")}


def run_memory_command(args: argparse.Namespace) -> int:
    out = sys.stdout
    json_file = Path(args.json) if args.json else None

    def work() -> int:
        if args.board == "list":
            return _list_boards(out)
        from backend_core.common.cpus import normalise_target
        from backend_core.stages.models import parse_model_source

        board = _board(args)                                   # bad sizes / names: exit 2 before lowering
        core = board.core if board is not None and board.core in TARGETS else None
        target = normalise_target(args.target or core or DEFAULT_TARGET)
        if not is_program_path(args.model):
            parse_model_source(args.model)
        from backend_core.orchestration.jobs import Job, LowerRequest, MemoryOptions
        from backend_core.orchestration.jobs.steps.memory import per_cpu_lines
        from backend_core.target.memory import summary_lines

        schedule = schedule_options(args, json_file, target)
        job = Job(args.model, LowerRequest(target=target, flow=args.flow, use_cache=not args.no_cache),
                  steps=("memory", "schedule") if schedule else ("memory",), board=args.board,
                  memory=MemoryOptions(ram=args.ram, flash=args.flash, elf=args.elf, runtime_from=args.runtime_from,
                                       all_cpus=args.all_cpus), **({"schedule": schedule} if schedule else {}))
        res = submit(job, lambda kind, data: print(f"… {data['text']}", file=sys.stderr, flush=True)
                      if kind == "status" else None)
        res.raise_error()                                      # bad input / a failed lowering: cause and fix
        rep = res.steps["memory"]
        print(f"{rep.get('model', args.model)} on {target}: memory (bytes as ExecuTorch planned them)", file=out)
        for line in summary_lines(rep):
            print(line, file=out)
        payload: dict[str, Any] = {"memory": rep}
        if args.all_cpus:
            print("\nper CPU (CMSIS-NN scratch depends on the kernel family):", file=out)
            for line in per_cpu_lines(rep["per_cpu"]):
                print(line, file=out)
        if schedule:
            payload["schedule"] = res.steps["schedule"]
            print_schedule(res, out)
        elif rep.get("verdict") and not rep["verdict"]["fits"] and not is_program_path(args.model) \
                and board is not None and not args.all_cpus:
            payload["fit_schedule"] = _suggest_schedule(job, board, out, schedule_output(args, json_file, target))
        write_json(json_file, payload)
        if json_file:
            print(f"wrote json: {json_file}", file=out)
        v = (res.steps["schedule"]["memory"] if schedule else rep).get("verdict")
        return 1 if v is not None and not v["fits"] else 0

    return guarded(work, json_file=json_file)
