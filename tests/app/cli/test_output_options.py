"""Every output option of every subcommand (issue 44, items 11-12): one that cannot be written, or whose folder
is missing (a typo: refused, never created, as cp and tee do), is exit 2 before any work, naming the option and
the folder; no traceback, nothing written. The options are found by walking the real parser, so a new one is
tested the day it is declared (tests/structure/test_cli_outputs.py: every writing option is declared so)."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pytest

from app.cli import build_parser, main
from app.cli.outputs import FOLDER


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for a in subs:
        for name, sp in a.choices.items():
            yield from _leaves(sp, (*path, name))


def _output_options() -> list[tuple[tuple[str, ...], argparse.ArgumentParser, argparse.Action]]:
    return [(path, p, a) for path, p in _leaves(build_parser()) for a in p._actions
            if getattr(a, "cmlens_output", None)]


def _argv(path: tuple[str, ...], parser: argparse.ArgumentParser, action: argparse.Action, value: str,
          tmp: Path) -> list[str]:
    """The subcommand with its required arguments (a model name: nothing runs) and `action` set to `value`."""
    argv = list(path)
    for a in parser._actions:
        if a is action or isinstance(a, argparse._HelpAction):
            continue
        if not a.option_strings:
            argv += ["ds_cnn", "resnet8"] if a.nargs in ("+", "*") else ([] if a.nargs == "?" else ["ds_cnn"])
        elif a.required:
            argv += [a.option_strings[0], str(tmp / "required")]
    suffix = (action.cmlens_output[1] or "") if not value.endswith("/") else ""
    return [*argv, action.option_strings[0], value + suffix]


OPTIONS = _output_options()
IDS = [" ".join((*p, a.option_strings[-1])) for p, _, a in OPTIONS]


def test_every_output_option_the_issue_names_is_declared() -> None:
    found = {(p[0], a.option_strings[-1]) for p, _, a in OPTIONS}
    for cmd, opt in [("lower", "--html"), ("lower", "--json"), ("lower", "--pte"), ("lower", "--bpte"),
                     ("numerics", "--csv"), ("numerics", "--plot"), ("numerics", "--json"), ("run", "--json"),
                     ("profile", "--json"), ("selftest", "--json"), ("compare", "--baseline-out"),
                     ("compare", "--html"), ("gate", "--html"), ("gate", "--json"), ("gate", "--write-baseline"),
                     ("evaluate", "--html"), ("repro", "--output"), ("export", "--output"), ("history", "--output"),
                     ("history", "--html"), ("sweep", "--out"), ("memory", "--json"), ("check", "--json"),
                     ("gui", "--screenshot")]:
        assert (cmd, opt) in found, f"{cmd} {opt} is not declared with add_output"


@pytest.mark.parametrize("path,parser,action", OPTIONS, ids=IDS)
def test_unwritable_output_is_exit_2_before_any_work(path, parser, action, tmp_path: Path, capsys) -> None:
    start = time.monotonic()
    code = main(_argv(path, parser, action, "/proc/cmlens-x", tmp_path))
    err = capsys.readouterr().err
    assert code == 2, err
    assert action.option_strings[0] in err and "/proc" in err and "Traceback" not in err
    assert time.monotonic() - start < 5, "the check came after some work"


@pytest.mark.parametrize("path,parser,action", OPTIONS, ids=IDS)
def test_missing_parent_folder_is_refused_not_created(path, parser, action, tmp_path: Path, capsys) -> None:
    missing = tmp_path / "typo"
    code = main(_argv(path, parser, action, str(missing / "x"), tmp_path))
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"the folder {missing} does not exist" in err and "mkdir -p" in err
    assert not missing.exists(), "a missing parent folder was created"


def test_a_missing_output_folder_itself_may_be_made(tmp_path: Path) -> None:
    """-o DIR (export) and --out DIR (sweep) name a folder the command makes: only its parent must exist."""
    from backend_core.common.files import check_writable_folder

    kinds = {(p[0], a.option_strings[-1]): a.cmlens_output[0] for p, _, a in OPTIONS}
    assert kinds[("export", "--output")] == FOLDER and kinds[("sweep", "--out")] == FOLDER
    assert kinds[("repro", "--output")] != FOLDER
    assert check_writable_folder(tmp_path / "new", "-o") == tmp_path / "new"
    assert not (tmp_path / "new").exists()
    (tmp_path / "f").write_text("")
    with pytest.raises(Exception, match="a file, not a folder"):
        check_writable_folder(tmp_path / "f", "--out")


def test_a_wrong_plot_type_is_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["numerics", "ds_cnn", "--plot", str(tmp_path / "p.jpg")]) == 2
    assert "PNG" in capsys.readouterr().err
