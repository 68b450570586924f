"""`--json F` (the old `--json-file F` warns) and `--gap-metric` of `cmlens run` / `selftest`."""
from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

from app.cli import build_parser


def parse(argv: list[str]) -> argparse.Namespace:
    parser = build_parser()
    return parser.parse_args(argv)


def test_run_without_checkout_writes_error_json(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    f = tmp_path / "r.json"
    args = parse(["run", "ds_cnn", "--json", str(f)])
    assert args.gap_metric == "MSE"
    code = args.func(args, out=io.StringIO(), err=io.StringIO())
    data = json.loads(f.read_text())
    assert code == 2 and data["exit_code"] == 2 and "checkout" in data["error"]["message"]


def test_run_bad_checkout_writes_error_json(tmp_path: Path) -> None:
    f = tmp_path / "r.json"
    args = parse(["run", "ds_cnn", "--et-root", str(tmp_path / "nope"), "--etdump", "--gap-metric", "SNR",
                  "--json-file", str(f)])
    err = io.StringIO()
    code = args.func(args, out=io.StringIO(), err=err)
    data = json.loads(f.read_text())
    assert code == 2 and data["exit_code"] == 2
    assert "--json-file is now --json F" in err.getvalue()          # the old spelling still writes, and says so
    assert str(tmp_path / "nope") in data["error"]["message"] + data["error"]["hint"]
    assert data["error"]["message"] in err.getvalue()
