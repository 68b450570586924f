"""CLI subcommands of the target flow: `doctor`, `selftest` and `run`. app/cli.py wires them in with
`add_target_commands(subparsers)`; each sets `func(args) -> int` (the exit status).

Exit status of selftest and run: 0 PASS, 1 FAIL, 2 bad input or missing tool (the message has the install
command), 3 build or run failure (fault, hang, no result), 130 cancelled."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from backend_core.errors import Cancelled, CmlensError
from backend_core.targets import DEFAULT_TARGET, TARGETS


def add_target_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add `doctor` and `selftest` to an argparse subparsers object."""
    d = subparsers.add_parser(
        "doctor", help="check the toolchain, simulators and ExecuTorch checkout",
        description="Find arm-none-eabi-gcc, newlib, cmake, ninja, qemu-system-arm, the Corstone FVPs, "
                    "graphviz, the ExecuTorch checkout and CMSIS-NN; print versions and, for anything "
                    "missing, the command that installs it. Exit 0 when the QEMU flow can run, else 2.")
    d.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout (default: $EXECUTORCH_ROOT)")
    d.add_argument("--cmsis-nn", metavar="PATH", help="CMSIS-NN source tree (default: $CMSIS_NN_PATH)")
    d.add_argument("--json", action="store_true", help="print the findings as JSON")
    d.set_defaults(func=cmd_doctor)

    from backend_core.target.selftest import VARIANTS

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
    s.add_argument("--quiet", action="store_true", help="do not echo build output")
    s.add_argument("--json", action="store_true", help="print the result as JSON at the end")
    s.add_argument("--json-file", type=Path, metavar="FILE",
                   help="also write the result (or the error) as JSON to FILE (for the GUI)")
    s.set_defaults(func=cmd_selftest)

    r = subparsers.add_parser(
        "run", help="lower a model, build ExecuTorch's Arm runner with it and run it on a simulator",
        description="Lower MODEL to a bundled program (.bpte, reference outputs from the quantized model) or "
                    "take a .pte/.bpte, check its operators against the ExecuTorch checkout, build the "
                    "checkout's libraries for the CPU (once, cached, ~15 min) and its stock "
                    "arm_executor_runner on the kernels/ board layer, run it on QEMU or a Corstone FVP and "
                    "report PASS/FAIL, error stats, cycles and ETDump. Exit 0 PASS, 1 FAIL, 2 bad input or "
                    "missing tool, 3 build/run failure.")
    r.add_argument("model", metavar="MODEL", help="zoo name, path/to/model.py[:NAME], .pt2, or a .pte/.bpte")
    r.add_argument("--sim", choices=("qemu", "fvp"), default="qemu", help="simulator (default: qemu)")
    r.add_argument("--target", default=DEFAULT_TARGET, metavar="CPU",
                   help=f"CPU, one of {', '.join(TARGETS)} (default: {DEFAULT_TARGET})")
    r.add_argument("--et-root", metavar="PATH", help="ExecuTorch checkout (default: $EXECUTORCH_ROOT)")
    r.add_argument("--cmsis-nn", metavar="PATH",
                   help="CMSIS-NN source tree (default: $CMSIS_NN_PATH; else ExecuTorch's CMake downloads it)")
    r.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="stop the simulator after S seconds (default: 120)")
    r.add_argument("--flow", choices=("legacy", "explicit"), default="legacy", help="lowering flow")
    r.add_argument("--semihosting", action="store_true",
                   help="build a runner that reads the model from the host (once per op set: a new model with "
                        "the same ops needs no rebuild) instead of baking the model in")
    r.add_argument("--etdump", action="store_true", help="also dump every intermediate output into the ETDump (debug_buffer.bin; the libraries "
                        "always have the event tracer)")
    r.add_argument("--atol", type=float, default=0.01, help="BundleIO absolute tolerance (default 0.01)")
    r.add_argument("--rtol", type=float, default=0.01, help="BundleIO relative tolerance (default 0.01)")
    r.add_argument("--cache-dir", type=Path, metavar="DIR",
                   help="cache of library and runner builds (default: ~/.cache/cmlens)")
    r.add_argument("--quiet", action="store_true", help="do not echo build output")
    r.add_argument("--gap-metric", choices=("MSE", "L1", "SNR"), default="MSE",
                   help="with --etdump: the Inspector distance of the per-layer gaps (default MSE)")
    r.add_argument("--json", action="store_true", help="print the result as JSON at the end")
    r.add_argument("--json-file", type=Path, metavar="FILE",
                   help="also write the result (or the error) as JSON to FILE (for the GUI)")
    r.set_defaults(func=cmd_run)


def _write_json(path: Path | None, data: dict) -> None:
    """The GUI reads this file after the process ends: no parsing of interleaved stdout."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2, default=str))


def _error(exc: CmlensError, err: TextIO, json_file: Path | None = None) -> int:
    _write_json(json_file, {"error": {"message": exc.message, "hint": exc.hint, "detail": exc.detail,
                                      "type": type(exc).__name__}, "exit_code": exc.exit_code})
    print(f"error: {exc.message}", file=err)
    if exc.hint:
        print(exc.hint, file=err)
    if exc.detail:
        print("--- last output ---\n" + exc.detail, file=err)
    return exc.exit_code


def cmd_doctor(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the doctor report; 0 when everything the QEMU flow needs is present, else 2."""
    from backend_core.target.doctor import run_doctor

    out = out or sys.stdout
    report = run_doctor(et_root=getattr(args, "et_root", None), cmsis_nn=getattr(args, "cmsis_nn", None))
    if getattr(args, "json", False):
        print(json.dumps(report.to_dict(), indent=2), file=out)
    else:
        print(report.to_text(), file=out)
    return 0 if report.ok else 2


def _printer(out: TextIO, quiet: bool):
    """Echo streamed lines. The simulator driver has already fed the full line to the UART parser;
    what is printed is abbreviated (the ETDump's base64 lines are 100+ kB each)."""
    from backend_core.target.uart import abbreviate_line

    def on_line(stream: str, line: str) -> None:
        line = abbreviate_line(line)
        if stream == "uart":
            print(f"uart> {line}", file=out, flush=True)
        elif stream == "cmlens":
            print(f"cmlens: {line}", file=out, flush=True)
        elif stream == "stderr" and not quiet:
            print(f"  ! {line}", file=out, flush=True)
        elif not quiet:
            print(f"  | {line}", file=out, flush=True)
    return on_line


def cmd_run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Lower + build + run MODEL on a simulator, streaming build output and UART lines."""
    import os

    from backend_core.target.run_model import RunOptions, run_model

    out, err = out or sys.stdout, err or sys.stderr
    json_file = getattr(args, "json_file", None)
    et_root = args.et_root or os.environ.get("EXECUTORCH_ROOT")
    if not et_root:
        _write_json(json_file, {"error": {"message": "no ExecuTorch checkout", "type": "NoCheckout",
                                          "hint": "pass --et-root PATH (or set EXECUTORCH_ROOT)"},
                                "exit_code": 2})
        print("error: no ExecuTorch checkout: pass --et-root PATH (or set EXECUTORCH_ROOT).", file=err)
        print("The runner and its libraries are built from the sources of a checkout:\n"
              "  git clone https://github.com/pytorch/executorch && cd executorch && "
              "git submodule update --init third-party/flatbuffers third-party/flatcc third-party/gflags "
              "third-party/json backends/xnnpack/third-party/FXdiv\n"
              "Offline, also pass --cmsis-nn PATH (a clone of https://github.com/ARM-software/CMSIS-NN).",
              file=err)
        return 2
    opts = RunOptions(target=args.target, sim=args.sim, timeout=args.timeout, etdump=args.etdump,
                      atol=args.atol, rtol=args.rtol, flow=args.flow, cache_root=args.cache_dir,
                      semihosting=args.semihosting, gap_metric=getattr(args, "gap_metric", "MSE"))
    print(f"cmlens: run {args.model} for {args.target} on {args.sim}, checkout {et_root}", file=out, flush=True)
    try:
        result = run_model(args.model, et_root=et_root, cmsis_nn=args.cmsis_nn, options=opts,
                           on_line=_printer(out, args.quiet))
    except Cancelled as exc:
        print(f"cancelled: {exc.message}", file=err)
        return 130
    except KeyboardInterrupt:
        print("cancelled", file=err)
        return 130
    except CmlensError as exc:
        return _error(exc, err, json_file)
    print("-" * 60, file=out)
    print(result.summary(), file=out)
    code = 0 if result.passed else 1 if result.outcome == "FAIL" else 3
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=str), file=out)
    _write_json(json_file, {**result.to_dict(), "exit_code_cli": code})
    return code


def cmd_selftest(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Build + run the self-test, streaming build and UART output; returns the exit status."""
    from backend_core.target.boards import board_for
    from backend_core.target.selftest import run_selftest

    out, err = out or sys.stdout, err or sys.stderr
    quiet = getattr(args, "quiet", False)
    on_line = _printer(out, quiet)

    try:
        board = board_for(args.target, args.sim)
        print(f"cmlens: self-test '{args.firmware}' for {board.cpu} on {board.name} ({board.simulator}), "
              f"time limit {args.timeout:g} s", file=out, flush=True)
        result = run_selftest(args.target, args.sim, args.timeout, variant=args.firmware,
                              build_root=args.build_dir, on_line=on_line)
    except Cancelled as exc:
        print(f"cancelled: {exc.message}", file=err)
        return 130
    except KeyboardInterrupt:
        print("cancelled", file=err)
        return 130
    except CmlensError as exc:
        return _error(exc, err, getattr(args, "json_file", None))
    print("-" * 60, file=out)
    print(result.summary(), file=out)
    code = 0 if result.passed else 1 if result.outcome == "FAIL" else 3
    data = asdict(result)
    data["elf"] = str(result.elf)
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str), file=out)
    _write_json(getattr(args, "json_file", None), {**data, "exit_code_cli": code})
    return code
