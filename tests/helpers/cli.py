"""The CLI as a user types it, in-process: argv through `build_parser`, the subcommand's exit code and
what it printed on stdout and stderr."""
from __future__ import annotations

import io

import pytest

from app.cli import build_parser


def run_cli(argv: list[str], monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    parser = build_parser()
    args = parser.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, out=out, err=err)
    return code, out.getvalue(), err.getvalue()
