"""`cmlens evaluate`: the exit code and the printed table (one real subprocess), bad input in process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from .conftest import ROOT, write_npy_folder


def test_cli_prints_the_table_and_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "ev.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "app.cli", "evaluate", "digits_cnn", "--limit", "30", "--json", str(out)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text = r.stdout
    assert "digits_cnn -> cortex-m55 (legacy flow): 30 samples, get_eval_data() of zoo entry digits_cnn" in text
    for row in ("float", "fake-quant (PT2E)", "lowered (host)", "top-1", "agree", "L2 rel", "cosine",
                "per-class top-1", "flips (top-1 of the lowered program differs from float):"):
        assert row in text, row
    report = json.loads(out.read_text())
    assert report["evaluate"]["samples"] == 30 and report["stages"]           # the lowering's report + the section
    lowered = next(line for line in text.splitlines() if line.startswith("lowered (host)"))
    assert f"{100 * report['evaluate']['models']['lowered']['top1']:.2f} %" in lowered


def test_cli_bad_data_exits_2_naming_the_file(tmp_path: Path, capsys) -> None:
    from app.cli import main

    assert main(["evaluate", "digits_cnn", "--data", str(tmp_path / "nowhere")]) == 2     # before any import
    err = capsys.readouterr().err
    assert "--data" in err and "no such folder" in err and "importing ExecuTorch" not in err
    (tmp_path / "empty").mkdir()
    assert main(["evaluate", "digits_cnn", "--data", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "is empty" in err and "sub-folder per class" in err and "importing ExecuTorch" not in err
    data = write_npy_folder(tmp_path / "d", 2)
    np.save(data / "d001.npy", np.zeros((2, 8, 8), np.float32))                          # a wrong shape
    out = tmp_path / "r.json"
    assert main(["evaluate", "digits_cnn", "--data", str(data), "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert "d001.npy: input 0 has shape (2, 8, 8), the model takes (1, 1, 8, 8)" in err and "Save samples" in err
    report = json.loads(out.read_text())
    assert report["error"]["step"] == "evaluate" and report["status"] == "done"   # the lowering's report stays
