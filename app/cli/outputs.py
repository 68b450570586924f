"""The one road of every output option of every subcommand (`--json F`, `--html F`, `--csv F`, `--plot F.png`,
`--json-file F`, `-o F|DIR`, `--baseline-out F`, ...): declared with `add_output` where the option is
declared, and checked by `cmlens` (app/cli/__init__.main) before the subcommand runs, so an output that
cannot be written is exit 2 in a fraction of a second, before any lowering or build, and no subcommand can
forget one (tests/structure/test_cli_outputs.py finds every option whose help says it writes)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Iterator

FILE, FOLDER = "file", "folder"


def add_output(parser: Any, *names: str, kind: str = FILE, suffix: str | None = None,
               **kwargs: Any) -> argparse.Action:
    """`parser.add_argument(*names, **kwargs)` for a path the command writes. kind FILE: its folder must exist
    (a missing one is a typo, as for cp); FOLDER: the folder itself may be missing (the command makes it),
    its parent may not. `suffix` (".png"): the one file type the command writes there."""
    action = parser.add_argument(*names, **kwargs)
    action.cmlens_output = (kind, suffix)
    return action


STDOUT = "-"          # `--json` without a file (or `--json -`): the JSON printed on stdout at the end


def add_json_output(parser: Any, help: str) -> None:
    """`--json F`, the one spelling of a JSON output in every subcommand; in run, selftest, doctor and
    profile a bare `--json` prints it on stdout as before. `--json-file F`, the old spelling, stays as a
    hidden alias that warns (`json_destination`)."""
    add_output(parser, "--json", nargs="?", const=STDOUT, default=None, metavar="F",
               help=help + " (without F: print it on stdout at the end)")
    add_output(parser, "--json-file", dest="json_file_alias", default=None, metavar="F", help=argparse.SUPPRESS)


def json_destination(args: argparse.Namespace, err: Any = None) -> tuple[Path | None, bool]:
    """(the JSON file to write or None, print on stdout?) from --json / the old --json-file."""
    import sys

    value = getattr(args, "json", None)
    alias = getattr(args, "json_file_alias", None)
    if alias:
        print("cmlens: warning: --json-file is now --json F (the old spelling will go)", file=err or sys.stderr)
        value = value if value not in (None, STDOUT) else alias
        return Path(value), getattr(args, "json", None) == STDOUT
    if value is None or value is False:
        return None, False
    return (None, True) if value is True or value == STDOUT else (Path(value), False)


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[argparse.ArgumentParser]:
    """The parser and the subcommand parsers `args` came through (`history show`: three)."""
    yield parser
    for action in parser._actions:                       # argparse has no public walk
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                yield from _chosen(action.choices[name], args)


def output_actions(parser: argparse.ArgumentParser,
                   args: argparse.Namespace) -> list[tuple[argparse.Action, str, str | None]]:
    """(action, kind, suffix) of every output option of the subcommand `args` is for."""
    return [(a, *a.cmlens_output) for p in _chosen(parser, args) for a in p._actions  # type: ignore[attr-defined]
            if getattr(a, "cmlens_output", None)]


def check_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every output the command was given (or defaults to: repro's repro.py, sweep's ./cmlens-sweep) can be
    written now; BadInputError (exit 2) naming the option, the path and the reason otherwise."""
    from backend_core.common.errors import BadInputError
    from backend_core.common.files import check_writable, check_writable_folder

    for action, kind, suffix in output_actions(parser, args):
        value = getattr(args, action.dest, None)
        if value is None or value == "" or value == STDOUT or isinstance(value, bool):
            continue
        opt = "/".join(action.option_strings)          # -o/--output
        if suffix and not str(value).lower().endswith(suffix):
            raise BadInputError(f"{opt} {value}: the file is written as {suffix[1:].upper()}.",
                                f"Use a file name ending in {suffix}.")
        (check_writable_folder if kind == FOLDER else check_writable)(value, opt)
