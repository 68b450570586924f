"""Backfill through Dask: the 8 commits lowered on a local dask.distributed cluster of 2 worker processes
(`--executor dask`, the same `DaskExecutor` as `cmlens sweep --scheduler`), the same figures as lowered
one by one in this process, and the user's tree untouched."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import cli, tree_state

pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(600)        # worker processes: a hang fails the test, never the suite


def test_dask_backfill_records_the_same_series(model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = model_repo
    before = tree_state(repo)
    db = tmp_path / "dask.db"
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "8", "--calib", "1", "--executor", "dask",
                         "--workers", "2", "--history", db)
    assert code == 0, err
    assert "Dask cluster" in err and "recorded 8 commit(s) (0 failed to lower)" in out
    assert tree_state(repo) == before
    code, out, err = cli("history", "show", repo / "model.py", "--history", db, "--json", tmp_path / "d.json")
    assert code == 0, err
    data = json.loads((tmp_path / "d.json").read_text())
    assert [r["commit"] for r in data["records"]] == commits                    # drawn in commit order
    fb = [c["commit"] for c in data["changes"] if c["kind"] == "metric" and c["metric"] == "fallbacks"]
    assert fb == [commits[4]]
    local = tmp_path / "local.db"
    code, _, err = cli("history", "backfill", repo / "model.py", "--last", "8", "--calib", "1", "--executor", "local",
                       "--history", local)
    assert code == 0, err
    from backend_core.orchestration.history import open_store

    def figures(path: Path) -> dict[str, dict]:
        with open_store(path) as store:
            return {r.commit: {k: v for k, v in r.metrics.items() if k != "lowering_s"} for r in store.records()}
    assert figures(db) == figures(local)
