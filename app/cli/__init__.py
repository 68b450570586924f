"""`cmlens`: the headless face of CortexM Lens. Every subcommand calls the same backend_core
functions as the GUI. Heavy imports (torch, ExecuTorch) happen inside the commands."""
from __future__ import annotations

import argparse
import sys

from backend_core.models.zoo import ZOO

EPILOG = "Zoo models (all with random weights: no download is possible here):\n" + "\n".join(
    f"  {name:18s} {entry.description}" for name, entry in ZOO.items())


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="cmlens", description="See how ExecuTorch lowers a PyTorch model to Arm Cortex-M: every "
        "pass, every fallback and why; run it on a simulator.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    from .cli_lower import add_lower_command

    add_lower_command(sub, EPILOG)
    for module, fn in (("app.cli_gui", "add_gui_command"), ("app.cli_numerics", "add_numerics_command"),
                       ("app.cli_target", "add_target_commands")):
        try:
            mod = __import__(module, fromlist=[fn])
        except ImportError as e:
            if e.name != module:
                raise
            continue
        getattr(mod, fn)(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        if args.command is None and "gui" in ap._subparsers._group_actions[0].choices:  # type: ignore[union-attr]
            return main(["gui"])
        ap.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
