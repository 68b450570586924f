"""A DistilBERT-style encoder with eager attention (issue 38): ExecuTorch's ReplaceScalarWithTensorArgPass
fails on its attention bmm (int8 x int32). What a user sees of that failure, from the CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


from .conftest import ROOT, needs_library, opt_in, source2

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
    # the line that made the op: the torch.matmul inside eager_attention_forward, then the calls from the
    # user's own line down to it (torch.export keeps only `forward` frames; the tool's own export keeps all)
    assert "modeling_distilbert.py:143 in eager_attention_forward()" in p.stderr
    assert "attn_output = torch.matmul(attn_weights, value)" in p.stderr
    assert "called from " + str(ROOT / "bench" / "realworld_models2.py") + ":61 in forward" in p.stderr
    assert "modeling_distilbert.py:190 in forward: attn_output, attn_weights = attention_interface(" in p.stderr
    err = json.loads(out.read_text())["error"]
    assert err["failure"]["source"].endswith("modeling_distilbert.py:143")
    assert "logged by torch during the stage" in err["traceback"]
    assert "failed while attempting to run meta for aten.bmm.default" in err["traceback"]


def test_repro_writes_a_small_file_that_fails_the_same_way(tmp_path: Path) -> None:
    """Token ids as the input (an embedding: randint(-8, 8) indexed out of range before); the file is
    <= 60 lines, fails in a fresh process with ExecuTorch's error, and --json is written."""
    out, js = tmp_path / "repro.py", tmp_path / "repro.json"
    p = cmlens("repro", source2(NAME), "-o", str(out), "--json", str(js), "--calib", "2", cache=tmp_path)
    assert p.returncode == 0, p.stdout[-1500:] + p.stderr[-3000:]
    assert "Traceback" not in p.stdout + p.stderr
    rep = json.loads(js.read_text())
    assert rep["reproduces"] is True and rep["minimal"] is True
    assert rep["expected"] == "RuntimeError: expected scalar type torch.int8 but found torch.int32"
    assert rep["stage"] == "ReplaceScalarWithTensorArgPass"
    assert "matmul_1" in rep["nodes"]
    text = out.read_text()
    assert rep["lines"] == len(text.splitlines()) <= 60
    assert "backend_core" not in text


@opt_in
def test_repro_whole_export_when_no_subgraph_reproduces(tmp_path: Path) -> None:
    """When minimising finds nothing, the whole export is written, marked NOT MINIMAL, and still checked
    in a fresh process (here it is forced: the search is given nothing but the whole graph)."""
    from backend_core.stages.pipeline.stages import PipelineOptions
    from backend_core.analyses.repro import minimize

    real = minimize.grow_ancestors
    minimize.grow_ancestors = lambda *a, **k: None          # type: ignore[assignment]
    window = minimize.narrow_window
    minimize.narrow_window = lambda *a, **k: None           # type: ignore[assignment]
    try:
        rep = minimize.make_repro(source2(NAME), PipelineOptions(calib=2), str(tmp_path / "whole.py"))
    finally:
        minimize.grow_ancestors, minimize.narrow_window = real, window
    text = Path(rep.path).read_text()
    assert not rep.minimal and text.startswith('"""NOT MINIMAL (the whole export')
    assert len(rep.nodes) >= 80         # every compute op of the 2-layer encoder
    assert minimize.same_error(rep.fresh_process, rep.expected), rep.fresh_process


def test_keep_going_takes_one_round_per_cause(tmp_path: Path) -> None:
    """Both layers' attention bmm fail the same check (an int8 and an int32 input): quarantined together in
    round 1, so the lowering is done in round 2 (it was one round per bmm); the progress names them."""
    out = tmp_path / "kg.json"
    p = cmlens("lower", source2(NAME), "--no-cache", "--keep-going", "--calib", "2", "--json", str(out),
               cache=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "failed on bmm_1, bmm_3; leaving them in float and lowering again (round 2/8)" in p.stderr
    assert "round 3/" not in p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    report = json.loads(out.read_text())
    assert report["status"] == "done"
    quarantined = report["quantizer"]["quarantined"]
    assert set(quarantined) == {"bmm_1", "bmm_3"}
    assert {why["round"] for why in quarantined.values()} == {1}
