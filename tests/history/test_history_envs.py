"""One configuration under two Python environments (issue 35, point 5: ExecuTorch upgrades): `history
show` without --config shows both series side by side, each named by the ExecuTorch version its records
were lowered with, and the figures that differ between them at a commit; the HTML draws a line per
environment with the versions in its legend.

The first test writes the two series itself (fast, always runs). The second lowers the tests' model
under a real second environment with another ExecuTorch release: opt-in, since CI has none. Make one with
`scripts/make_second_env.sh` (a venv with executorch from PyPI over this venv's torch) and run
    CMLENS_TEST_SECOND_PYTHON=/work/venv-et150/bin/python pytest tests/history/test_history_envs.py"""
from __future__ import annotations

import os
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

from backend_core.orchestration.history import Record, open_store

from .helpers import cli

pytestmark = pytest.mark.timeout(600)        # worker processes: a hang fails the test, never the suite

BASE = "cortex-m55 legacy int8 calib=1"


def _rec(commit: str, i: int, et: str, env: str | None, arena: int) -> Record:
    return Record(model="model.py", name="model", config=BASE + (f" env={env}" if env else ""), commit=commit,
                  subject=f"commit {i}", commit_date=f"2026-11-0{i + 1}T12:00:00+00:00",
                  metrics={"fallbacks": 0, "arena_bytes": arena, "pte_bytes": 3904},
                  versions={"executorch": et, "torch": "2.14.1"})


def test_two_environments_side_by_side(model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = model_repo
    db = tmp_path / "envs.db"
    with open_store(db) as store:
        for i, c in enumerate(commits[:3]):
            store.add(_rec(c, i, "1.5.1", None, 80))
            store.add(_rec(c, i, "1.6.0", "executorch-1.6.0", 96 if i == 2 else 80))   # the upgrade grows it once
    code, out, err = cli("history", "show", repo / "model.py", "--history", db, "--html", tmp_path / "envs.html")
    assert code == 0, err
    assert "executorch 1.5.1 (this environment): 3 commit(s)" in out
    assert "executorch 1.6.0 (--python env=executorch-1.6.0): 3 commit(s)" in out
    between = out.split("between the environments (3 commit(s) recorded in all):")[1].split("wrote html")[0]
    assert between.strip().splitlines() == [f"{commits[2][:8]} \"commit 2\": arena peak (bytes): "
                                            "executorch 1.5.1 80, executorch 1.6.0 96"], out
    page = (tmp_path / "envs.html").read_text()
    assert "executorch 1.5.1 (this environment)" in page and "executorch 1.6.0 (--python env=executorch-1.6.0)" in page
    assert "Between environments: 1 difference(s)" in page
    assert page.count("<polyline") >= 2 * 3                         # a line per environment in each chart
    code, out, err = cli("history", "show", repo / "model.py", "--history", db, "--config", BASE)
    assert code == 0 and f"history of model.py [{BASE}]: 3 commit(s)" in out, err     # --config: one series
    assert "under 2 Python environments" not in out


SECOND = os.environ.get("CMLENS_TEST_SECOND_PYTHON")


@pytest.mark.skipif(not SECOND, reason="set CMLENS_TEST_SECOND_PYTHON to the python of a second venv with another "
                    "executorch release (scripts/make_second_env.sh makes one)")
def test_a_second_executorch_release_is_a_series_of_its_own(model_repo: tuple[Path, list[str]],
                                                            tmp_path: Path) -> None:
    assert SECOND is not None
    other = subprocess.run([SECOND, "-c", "import importlib.metadata as m; print(m.version('executorch'))"],
                           capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    here = version("executorch")
    assert other != here, f"{SECOND} has executorch {other}, the same as this environment: give another release"
    repo, commits = model_repo
    db = tmp_path / "two.db"
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "2", "--calib", "1", "--executor",
                         "local", "--history", db)
    assert code == 0, err
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "2", "--calib", "1",
                         "--python", SECOND, "--history", db)
    assert code == 0 and "recorded 2 commit(s) (0 failed to lower)" in out, out + err
    with open_store(db) as store:
        series = {c: {r.versions["executorch"] for r in store.records("model.py", c)}
                  for m, c, _ in store.models() if m == "model.py"}
    assert series == {BASE: {here}, f"{BASE} env=executorch-{other}": {other}}
    code, out, err = cli("history", "show", repo / "model.py", "--history", db, "--html", tmp_path / "two.html")
    assert code == 0, err
    assert f"executorch {here} (this environment): 2 commit(s)" in out
    assert f"executorch {other} (--python env=executorch-{other}): 2 commit(s)" in out
    assert "between the environments (2 commit(s) recorded in all)" in out
    print(out.split("between the environments")[1])            # what the two releases lower differently
    page = (tmp_path / "two.html").read_text()
    assert f"executorch {here}" in page and f"executorch {other}" in page
