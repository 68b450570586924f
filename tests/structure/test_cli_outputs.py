"""No subcommand can forget the early output check (issue 44, item 11): every option whose help says it
writes a file or folder is declared with app.cli.outputs.add_output, which `cmlens` checks before the
subcommand runs; and one helper writes files atomically (backend_core.common.files.write_atomic)."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from app.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
WRITES = re.compile(r"^(also )?(write|save)s?\b|output folder|the (bundle )?folder|the file to write|^the file\b",
                    re.I)


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _options(sp, (*path, name))
        elif a.option_strings and a.nargs != 0:
            yield path, a


def test_every_option_that_writes_is_an_output_option() -> None:
    missing = [f"{' '.join(p)} {a.option_strings[-1]}" for p, a in _options(build_parser())
               if WRITES.search(a.help or "") and not getattr(a, "cmlens_output", None)]
    assert not missing, f"declare these with app.cli.outputs.add_output: {missing}"


def test_one_atomic_writer() -> None:
    """A temporary file and a rename live in backend_core/common/files.py only (mkstemp made every report 0600)."""
    offenders = []
    for py in [*(ROOT / "backend_core").rglob("*.py"), *(ROOT / "app").rglob("*.py")]:
        text = py.read_text()
        if py.name == "files.py" and py.parent.name == "common":
            continue
        if "os.replace(" in text or "mkstemp(" in text:
            offenders.append(str(py.relative_to(ROOT)))
    assert not offenders, f"write through backend_core.common.files.write_atomic: {offenders}"
