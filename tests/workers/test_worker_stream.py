"""The job worker the window reads: a Job as JSON on stdin (nothing else), one protocol line per event,
stages as they complete, then the JobResult."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from backend_core.orchestration.jobs import Job, LowerRequest

ROOT = Path(__file__).resolve().parents[2]


def job_worker(stdin: str, cache: Path) -> tuple[int, list[dict]]:
    env = dict(os.environ, CMLENS_CACHE=str(cache))
    proc = subprocess.run([sys.executable, "-m", "backend_core.orchestration.workers.job"], input=stdin, capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_worker_streams_every_stage_then_the_job_result(tmp_path: Path) -> None:
    job = Job("layernorm_mlp", LowerRequest(), steps=("lower", "memory"), outputs={"json": str(tmp_path / "r.json")})
    code, msgs = job_worker(json.dumps(job.to_dict()) + "\n", tmp_path)
    assert code == 0
    types = [m["type"] for m in msgs]
    assert types[-2:] == ["result", "done"]
    stages = [m for m in msgs if m["type"] == "stage"]
    assert [s["snapshot"]["stage"] for s in stages] == stages[0]["planned"] and stages[-1]["snapshot"]["stage"] == "final"
    fb = [n for n in stages[-1]["snapshot"]["nodes"] if n["kind"] == "portable_fallback"]
    assert {n["fallback"]["category"] for n in fb} == {"not_annotated", "activation_not_fused"}
    result = msgs[-2]["job_result"]
    assert result["job"] == job.to_dict()                      # the very Job the caller sent
    assert result["steps"]["lower"]["status"] == "done" and result["steps"]["memory"]["arena_bytes"] > 0
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "done"


def test_worker_reports_bad_input_in_its_result_and_refuses_a_bad_job(tmp_path: Path) -> None:
    job = Job(str(tmp_path / "missing.py"), LowerRequest(), steps=("lower",))
    code, msgs = job_worker(json.dumps(job.to_dict()) + "\n", tmp_path)
    assert code == 2
    err = msgs[-2]["job_result"]["error"]
    assert err["exit_code"] == 2 and "not found" in err["message"]
    code, msgs = job_worker("--target m4 ds_cnn\n", tmp_path)      # arguments are not a Job
    assert code != 0 and msgs[-1]["type"] == "error" and "Traceback" not in msgs[-1]["message"]
