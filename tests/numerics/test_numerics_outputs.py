"""CSV, PNG, CLI, worker and input handling."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main as cli_main
from backend_core.analyses.numerics.table import summary_text, to_csv

REPO = Path(__file__).resolve().parents[2]


def test_csv_and_png_written(ds_cnn, tmp_path: Path) -> None:
    from app.numerics.view import render_sqnr_png

    text = to_csv(ds_cnn.result)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(ds_cnn.result.layers)
    assert rows[0]["node_id"] == ds_cnn.result.worst(1)[0].node_id
    png = tmp_path / "sqnr.png"
    render_sqnr_png(ds_cnn.result, str(png))
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    table = summary_text(ds_cnn.result)
    assert "Model outputs" in table and "final: numerically neutral" in table


def _bad_folder(tmp_path: Path, kind: str) -> Path:
    import torch

    d = tmp_path / kind
    d.mkdir()
    if kind == "garbage":
        (d / "sample0.pt").write_text("not a tensor")
    elif kind == "shape":
        torch.save(torch.zeros(1, 3), d / "sample0.pt")
    return d


@pytest.mark.parametrize("kind,needle", [("missing", "not found"), ("empty", "no .pt or .npy"),
                                         ("garbage", "Cannot read input file"),
                                         ("shape", "the model expects (1, 16)")])
def test_bad_inputs_folder_clear_message(tmp_path: Path, capsys, kind: str, needle: str) -> None:
    folder = tmp_path / "nope" if kind == "missing" else _bad_folder(tmp_path, kind)
    code = cli_main(["numerics", "layernorm_mlp", "--inputs", str(folder)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert needle in err, err
    assert ".pt" in err or "shape" in err          # the hint says what to do


def test_bad_inputs_folder_fails_before_lowering(tmp_path: Path) -> None:
    from backend_core.orchestration.jobs import Job, execute_job
    from backend_core.orchestration.jobs.spec import NumericsOptions

    stages: list[str] = []
    res = execute_job(Job("layernorm_mlp", steps=("lower", "numerics"),
                      numerics=NumericsOptions(inputs=str(_bad_folder(tmp_path, "empty")))),
                  lambda kind, data: stages.append(kind) if kind == "stage" else None)
    assert res.exit_code == 2 and "no .pt or .npy" in res.error["message"], res.error
    assert not stages, "the lowering started before the inputs were checked"


def test_folder_of_npy_inputs(tmp_path: Path, layernorm_mlp) -> None:
    import numpy as np

    from backend_core.analyses.numerics.inputs import load_samples, parse_inputs

    d = tmp_path / "npy"
    d.mkdir()
    for i in range(2):
        np.save(d / f"s{i}.npy", np.random.rand(1, 16).astype("float32"))
    samples = load_samples(parse_inputs(str(d)), layernorm_mlp.lowered.model.example_inputs, "legacy")
    assert len(samples) == 2 and samples[0][0].shape == (1, 16)


def test_cli_end_to_end(tmp_path: Path, capsys) -> None:
    out = {k: tmp_path / f"r.{k}" for k in ("csv", "png", "json")}
    code = cli_main(["numerics", "layernorm_mlp", "--inputs", "2", "--csv", str(out["csv"]),
                     "--plot", str(out["png"]), "--json", str(out["json"])])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert "Model outputs" in cap.out and "aten_native_layer_norm_default" in cap.out
    assert all(p.stat().st_size > 0 for p in out.values())
    assert json.loads(out["json"].read_text())["n_inputs"] == 2


def test_the_job_worker_streams_numerics_progress_and_result() -> None:
    """The window's numerics Job (lower + numerics) in the job worker: progress, then the result's section."""
    from backend_core.orchestration.jobs import Job, LowerRequest
    from backend_core.orchestration.jobs.spec import NumericsOptions

    job = Job("layernorm_mlp", LowerRequest(), steps=("lower", "numerics"), numerics=NumericsOptions(inputs=2))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "backend_core.orchestration.workers.job"],
                          input=json.dumps(job.to_dict()) + "\n",
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=170)
    msgs = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [m["type"] for m in msgs][-2:] == ["result", "done"]
    assert any(m["type"] == "event" and m["kind"] == "progress" and m["data"]["phase"] == "analysis" for m in msgs)
    result = msgs[-2]["job_result"]["steps"]["numerics"]
    assert result["n_inputs"] == 2 and result["layers"]


def test_a_bad_inputs_folder_is_refused_before_the_lowering() -> None:
    from backend_core.orchestration.jobs import Job, LowerRequest
    from backend_core.orchestration.jobs.spec import NumericsOptions

    job = Job("layernorm_mlp", LowerRequest(), steps=("lower", "numerics"),
              numerics=NumericsOptions(inputs="/nonexistent/folder"))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "backend_core.orchestration.workers.job"],
                          input=json.dumps(job.to_dict()) + "\n",
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    msgs = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert proc.returncode == 2
    result = msgs[-2]["job_result"]
    assert "not found" in result["error"]["message"] and "lower" not in result["steps"]


def test_cli_keep_going_compares_the_kept_going_lowering(tmp_path: Path, capsys) -> None:
    """`cmlens numerics --keep-going` measures the program `cmlens lower --keep-going` makes: the multiply
    and add the pre-flight left in float are layers of it (plain ExecuTorch's has cortex_m ones)."""
    model = str(REPO / "tests" / "preflight" / "models" / "float_operand_mul.py")
    runs = {}
    for flags in ([], ["--keep-going"]):
        out = tmp_path / f"r{len(flags)}.json"
        code = cli_main(["numerics", model, "--inputs", "2", "--json", str(out), *flags])
        assert code == 0, capsys.readouterr().err
        runs[bool(flags)] = {layer["target"] for layer in json.loads(out.read_text())["layers"]}
    assert "cortex_m.quantized_mul.default" in runs[False] and "cortex_m.quantized_mul.default" not in runs[True]
    assert "aten.mul.Tensor" in runs[True]
