"""One spelling for a JSON file: `--json F` in every subcommand that writes JSON (issue 45); the old
`--json-file` is a hidden alias, never shown in --help."""
from __future__ import annotations

import argparse

from app.cli import build_parser
from tests.structure.test_lowering_flags import _subcommands


def test_every_json_option_takes_a_file_and_json_file_is_hidden() -> None:
    with_json = []
    for name, sub in _subcommands(build_parser()).items():
        for action in sub._actions:
            if "--json" in action.option_strings:
                assert action.nargs in (None, "?") and getattr(action, "cmlens_output", None), name
                with_json.append(name)
            if "--json-file" in action.option_strings:
                assert action.help == argparse.SUPPRESS, f"{name} shows --json-file"
    assert {"lower", "run", "selftest", "doctor", "profile", "memory", "check", "compare"} <= set(with_json)
