"""`cmlens`: the headless face of CortexM Lens. Every subcommand calls the same backend_core
functions as the GUI. Heavy imports (torch, ExecuTorch) happen inside the commands."""
from __future__ import annotations

import argparse
import sys

from backend_core.common.errors import CmlensError

from .check import add_check_command
from .common import ZOO_EPILOG as EPILOG
from .compare import add_compare_command
from .doctor import add_doctor_command
from .evaluate import add_evaluate_command
from .export import add_export_command
from .gate import add_gate_command
from .gui import add_gui_command
from .history import add_history_command
from .lower import add_lower_command
from .memory import add_memory_command
from .numerics import add_numerics_command
from .profile import add_profile_command
from .repro import add_repro_command
from .run import add_run_command
from .selftest import add_selftest_command
from .sweep import add_sweep_command


# One module per subcommand; each `add_*_command(subparsers)` sets `func(args) -> exit status`.
SUBCOMMANDS = (add_lower_command, add_gui_command, add_numerics_command, add_doctor_command,
               add_selftest_command, add_run_command, add_memory_command, add_check_command, add_profile_command,
               add_compare_command, add_gate_command, add_sweep_command, add_evaluate_command, add_repro_command,
               add_history_command, add_export_command)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="cmlens", description="See how ExecuTorch lowers a PyTorch model to Arm Cortex-M: every "
        "pass, every fallback and why; run it on a simulator.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="store_true",
                    help="print the versions of cmlens, Python, torch, torchao and ExecuTorch (and the "
                         "ExecuTorch checkout's commit when EXECUTORCH_ROOT names one), for a bug report")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.version:
        from .version import print_version

        return print_version()
    if not getattr(args, "func", None):
        if args.command is None:
            return main(["gui"])
        ap.print_help()
        return 2
    if not getattr(args, "verbose", False):
        from backend_core.orchestration.execute.task import quiet_logs

        quiet_logs()        # one place: torch/ExecuTorch chatter stays off every subcommand's output
    from . import interrupt

    # the window handles its own signals in its event loop
    restore = interrupt.install() if args.command != "gui" else (lambda: None)
    try:
        from .outputs import check_outputs

        check_outputs(ap, args)          # every output option, before any work: exit 2 (app/cli/outputs.py)
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"\ninterrupted ({interrupt.signal_name()})", file=sys.stderr)
        return interrupt.exit_code()
    except CmlensError as exc:            # a typed error no subcommand caught: its cause and fix, never a traceback
        from .common import print_error

        return print_error(exc, verbose=getattr(args, "verbose", False) or None)
    except BrokenPipeError:              # `cmlens doctor | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no second error at exit
        return 0
    finally:
        restore()


if __name__ == "__main__":
    sys.exit(main())
