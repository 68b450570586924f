"""The third real-world wave (issue 46) end to end, opt-in (a minute or more per model; CMLENS_TEST_REALWORLD=1
and the libraries on PYTHONPATH, bench/realworld_models3.py says which): `cmlens lower --json` of every model
exits without a traceback and writes its JSON; every model lowers (with --keep-going when plain ExecuTorch fails
or the pre-flight finds something) with 0 `unknown` reasons; the keep-going rounds are printed for the record."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.lowering.lower import LowerHooks

from .conftest import MODELS3, ROOT, opt_in, source3

sys.path.insert(0, str(MODELS3.parent))
from realworld_models3 import CORPUS

pytestmark = opt_in


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_cli_lower_writes_json_without_a_traceback(name: str, tmp_path: Path) -> None:
    if not _have(CORPUS[name]):
        pytest.skip(f"needs {CORPUS[name]} on PYTHONPATH")
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-m", "app.cli", "lower", source3(name), "--calib", "2", "--no-cache",
                        "--json", str(out)], capture_output=True, text=True, cwd=ROOT, env=dict(os.environ),
                       timeout=1800)
    assert "Traceback" not in p.stdout + p.stderr, p.stderr[-3000:]
    assert p.returncode in (0, 1), p.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["model"]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_lowers_with_keep_going_and_no_unknown_reason(name: str) -> None:
    if not _have(CORPUS[name]):
        pytest.skip(f"needs {CORPUS[name]} on PYTHONPATH")
    from backend_core.orchestration.jobs.steps.lower import lower_source

    said: list[str] = []
    res = lower_source(source3(name), PipelineOptions(calib=2, keep_going=True), use_cache=False,
                       hooks=LowerHooks(on_status=said.append))
    assert res.status == "done", res.error
    unknown = [(n.target, n.fallback.message) for n in res.fallbacks() if n.fallback.category == "unknown"]
    assert not unknown, unknown
    rounds = sum(1 for s in said if s.startswith("--keep-going:"))
    print(f"\n{name}: {len(res.fallbacks())} fallback(s), keep-going rounds {rounds}")
