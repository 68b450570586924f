"""The worker process the GUI reads: one JSON object per line, stages as they complete."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, cache: Path) -> tuple[int, list[dict]]:
    env = dict(os.environ, CMLENS_CACHE=str(cache))
    proc = subprocess.run([sys.executable, "-m", "backend_core.workers.lowering", *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_worker_streams_planned_stages_every_snapshot_then_done(tmp_path: Path) -> None:
    code, msgs = _run("layernorm_mlp", "--report", str(tmp_path / "r.json"), cache=tmp_path)
    assert code == 0
    types = [m["type"] for m in msgs]
    assert types[0] == "status" and "planned" in types and types[-1] == "done"
    planned = next(m for m in msgs if m["type"] == "planned")["stages"]
    stages = [m["snapshot"]["stage"] for m in msgs if m["type"] == "stage"]
    assert stages == planned and stages[-1] == "final"
    assert types.index("planned") < types.index("stage")
    final = [m for m in msgs if m["type"] == "stage"][-1]["snapshot"]
    fb = [n for n in final["nodes"] if n["kind"] == "portable_fallback"]
    assert {n["fallback"]["category"] for n in fb} == {"not_annotated", "activation_not_fused"}
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "done"


def test_worker_reports_bad_input_as_an_error_message(tmp_path: Path) -> None:
    code, msgs = _run(str(tmp_path / "missing.py"), cache=tmp_path)
    assert code == 2
    err = msgs[-1]
    assert err["type"] == "error" and err["exit_code"] == 2 and "not found" in err["message"]
