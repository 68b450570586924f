"""The lowering flags, declared here once for every subcommand that lowers, with one help text each.

A subcommand names the flags it takes (`add_lowering_flags(p, "target", "flow", ...)`); `lower_request_from`
(common.py) reads them into the one `LowerRequest`, whose constructor normalises the CPU and the
calibration, so a misspelt CPU is exit 2 with the list of CPUs (and an error JSON where --json is given) before
any work. The window's `cmlens gui` checks it while parsing (`check_target`): no window opens on a bad CPU.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from backend_core.common.cpus import DEFAULT_TARGET, TARGETS, normalise_target
from backend_core.common.errors import BadInputError

KEEP_GOING_HELP = ("when an ExecuTorch pass or the PT2E quantizer fails, or the pre-flight says the target would abort "
                   "or give wrong "
                   "values, lower again (at most 8 rounds): first with a value-preserving workaround on a copy "
                   "of the export when the diagnosis names one, else with the failing op taken out of "
                   "quantisation (a `pass_failure` fallback). The result is then not what plain ExecuTorch "
                   "produces, and every report says so")

REWRITE_HELP = ("an opt-in rewrite of a copy of the model before export, stated in every report: rnn-cells "
                "writes every nn.LSTM / nn.GRU as its cell equations over nn.Linear (unrolled), so the gates "
                "quantize onto CMSIS-NN kernels (ExecuTorch's own LSTM support is an open PR, #21024); same float "
                "values within rounding")

HELP = {
    "target": f"the CPU to lower for: one of {', '.join(TARGETS)}, or m4, m55 ... (default {DEFAULT_TARGET}; "
              "a command that takes --board uses the board's core)",
    "flow": "CortexMPassManager's legacy pass list, or the explicit-layout one (default legacy)",
    "calib": "calibration: N random samples (default 8), model:N / model (the model's own samples), or a folder "
             "of .pt/.npy files",
    "activations": "activation type of the per-tensor quantization config (default int8; int16 is accepted only by "
                   "a few kernels)",
    "channels-last": "convert the model's 4-D weights and 4-D inputs to channels_last before lowering (default: lower "
                     "the model exactly as given; the report states the option)",
    "keep-going": KEEP_GOING_HELP,
    "verify-suggestions": "try the fixes the tool can make (channels-last, relu6 -> hardtanh, softmax dim last) by "
                          "re-lowering modified copies; each says verified or not verified",
    "no-cache": "lower again even when the lowering cache has the result",
    "schedule": "run the first layers patch by patch to cut the peak RAM (MCUNetV2-style, on the lowered program, "
                "checked bit for bit on the host against the unscheduled one): auto (the least total RAM within "
                "15 %% extra MACs), fit:BOARD (the cheapest schedule that fits BOARD; fit: the --board or "
                "--ram/--flash given), or a schedule JSON written "
                "by an earlier --schedule; the chosen schedule is written as JSON beside the report, with the scheduled "
                "program as a .bpte whose expected outputs are the unscheduled program's (`cmlens run` judges it on "
                "a target)",
    "input-dtype": "with --schedule: the input the scheduled program takes: float32 (default, as the model gives "
                   "it) or int8 (the tensor the program's leading quantize makes, with its scale and zero point: "
                   "the caller quantizes, as camera/microphone pipelines deliver 8-bit samples; the report says so)",
}
LOWERING_FLAGS = (*HELP, "rewrite")


def checked_target(text: str) -> str:
    """argparse type of --target: the CPU's full name, or the list of valid ones as the parse error."""
    try:
        return normalise_target(text)
    except BadInputError as e:
        raise argparse.ArgumentTypeError(f"{e.message} {e.hint}") from None


def add_lowering_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *names: str,
                       target_default: str | None = DEFAULT_TARGET, unset: bool = False,
                       check_target: bool = False) -> None:
    """Declare the named lowering flags. `target_default=None`: the board decides the CPU. `unset`: every
    default is None, so a caller can tell a flag given from one left out (compare's per-side defaults)."""
    unknown = [n for n in names if n not in LOWERING_FLAGS]
    if unknown:
        raise ValueError(f"not a lowering flag: {unknown}")
    for name in names:
        _add(parser, name, target_default, unset, check_target)


def _add(parser: argparse.ArgumentParser | argparse._ArgumentGroup, name: str, target_default: str | None,
         unset: bool, check_target: bool) -> None:
    flag = f"--{name}"
    if name == "rewrite":
        from backend_core.stages.fallback.rnn_cells import REWRITES

        parser.add_argument(flag, action="append", choices=REWRITES, default=None, metavar="NAME",
                            help=REWRITE_HELP + f" (one of: {', '.join(REWRITES)})")
    elif name == "target":
        parser.add_argument(flag, type=checked_target if check_target else str, metavar="CPU", help=HELP[name],
                            default=None if unset else target_default)
    elif name == "flow":
        parser.add_argument(flag, choices=("legacy", "explicit"), default=None if unset else "legacy", help=HELP[name])
    elif name == "activations":
        parser.add_argument(flag, choices=("int8", "int16"), default=None if unset else "int8", help=HELP[name])
    elif name == "schedule":
        parser.add_argument(flag, default=None, metavar="auto|fit:BOARD|FILE", help=HELP[name])
    elif name == "input-dtype":
        parser.add_argument(flag, choices=("float32", "int8"), default=None if unset else "float32", help=HELP[name])
    elif name == "calib":
        parser.add_argument(flag, default=None, metavar="DIR|N", help=HELP[name])
    else:                                   # the switches
        parser.add_argument(flag, action="store_true", default=None if unset else False, help=HELP[name])


def schedule_options(args: argparse.Namespace, report: Path | str | None, target: str, *,
                     write: bool = True) -> Any:
    """The job's ScheduleOptions from --schedule/--input-dtype (None without --schedule), for every command
    that takes them. A FILE that is not a schedule, or an unknown fit:BOARD, is exit 2 here, before the
    lowering. The schedule JSON goes beside `report` (MODEL-CPU.schedule.json without one); `write=False`:
    none (export ships it inside the bundle)."""
    from backend_core.analyses.schedule.schedule_file import load_schedule
    from backend_core.common.boards.specs import board_named
    from backend_core.orchestration.jobs.spec import ScheduleOptions

    spec = getattr(args, "schedule", None)
    if not spec:
        if getattr(args, "input_dtype", "float32") not in (None, "float32"):
            raise BadInputError("--input-dtype without --schedule.", "Add --schedule auto (or fit:BOARD, or a FILE).")
        return None
    if spec.startswith("fit:"):
        board_named(spec[4:])
    elif spec == "fit":
        if not (getattr(args, "board", None) or getattr(args, "ram", None)):
            raise BadInputError("--schedule fit without a board to fit.",
                                "Pass --board NAME (or --ram/--flash sizes), or --schedule fit:BOARD.")
    elif spec != "auto":
        load_schedule(spec)
    output = schedule_output(args, report, target) if write else None
    return ScheduleOptions(spec=spec, input_dtype=getattr(args, "input_dtype", None) or "float32", output=output)


def schedule_output(args: argparse.Namespace, report: Path | str | None, target: str) -> str:
    """Where the chosen schedule's JSON goes: beside `report`, else MODEL-CPU.schedule.json here."""
    base = Path(report).with_suffix("") if report else Path(f"{Path(args.model.split(':')[0]).stem}-{target}")
    return str(base) + ".schedule.json"
