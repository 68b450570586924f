"""One declaration per lowering flag (app/cli/lowering_flags.py): every subcommand that lowers shows the
same text for --target, --flow, --calib, ... and none declares its own copy."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

from app.cli import build_parser
from app.cli.lowering_flags import LOWERING_FLAGS

ROOT = Path(__file__).resolve().parents[2]
NOT_A_LOWERING = {("app/cli/selftest.py", "--target")}     # the kernels' self-test: a CPU, no model lowered


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = sub
                out.update({f"{name} {k}": v for k, v in _subcommands(sub).items()})
    return out


def test_every_subcommand_shows_one_text_per_lowering_flag() -> None:
    texts: dict[str, dict[str, set[str]]] = {}
    for name, sub in _subcommands(build_parser()).items():
        if name.startswith("selftest"):
            continue
        for action in sub._actions:
            for flag in action.option_strings:
                if flag[2:] in LOWERING_FLAGS:
                    texts.setdefault(flag, {}).setdefault(action.help or "", set()).add(name)
    assert {"--target", "--flow", "--calib", "--keep-going", "--no-cache"} <= set(texts)
    several = {flag: sorted(map(sorted, by_text.values())) for flag, by_text in texts.items() if len(by_text) > 1}
    assert not several, f"a lowering flag with more than one help text: {several}"
    assert len(texts["--target"][next(iter(texts["--target"]))]) >= 10      # lower, run, memory, export, gui, ...


def test_no_subcommand_declares_a_lowering_flag_itself() -> None:
    offenders = []
    for py in sorted((ROOT / "app" / "cli").glob("*.py")):
        rel = py.relative_to(ROOT).as_posix()
        if py.name == "lowering_flags.py":
            continue
        for node in ast.walk(ast.parse(py.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                    and node.args[0].value[2:] in LOWERING_FLAGS and (rel, node.args[0].value) not in NOT_A_LOWERING):
                offenders.append(f"{rel}:{node.lineno} {node.args[0].value}")
    assert not offenders, "declare lowering flags with add_lowering_flags:\n" + "\n".join(offenders)
