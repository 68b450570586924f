"""A DistilBERT-style encoder with eager attention (issue 38): ExecuTorch's ReplaceScalarWithTensorArgPass
fails on its attention bmm (int8 x int32). What a user sees of that failure, from the CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, needs_library, source2

pytestmark = needs_library("transformers")
NAME = "distilbert_eager"


def cmlens(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "CMLENS_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


def test_default_output_has_no_traceback(tmp_path: Path) -> None:
    """torch logs the fake-tensor failure with its own 21-line traceback while the pass fails: kept off the
    default output, kept in the JSON (the failure's traceback, shown with --verbose)."""
    out = tmp_path / "r.json"
    p = cmlens("lower", source2(NAME), "--no-cache", "--json", str(out), cache=tmp_path)
    assert p.returncode == 3, p.stderr[-2000:]
    assert "ReplaceScalarWithTensorArgPass" in p.stderr
    assert "Traceback" not in p.stdout + p.stderr, p.stderr[:3000]
    err = json.loads(out.read_text())["error"]
    assert "logged by torch during the stage" in err["traceback"]
    assert "failed while attempting to run meta for aten.bmm.default" in err["traceback"]
