"""`cmlens lower MODEL --record` (issue 35): the lowering lands in the model repository's store, keyed by the
commit of the model file, and `history show` lists it; without --record nothing is written."""
from __future__ import annotations

import shutil
from pathlib import Path

from .conftest import make_repo
from .helpers import cli


def test_lower_record_adds_the_commit_to_the_store(tmp_path: Path) -> None:
    repo, commits = make_repo(tmp_path / "repo")
    code, _out, err = cli("lower", repo / "model.py", "--calib", "1")
    assert code == 0, err
    assert not (repo / ".cmlens").exists()                     # nothing recorded unless asked
    code, _out, err = cli("lower", repo / "model.py", "--calib", "1", "--record")
    assert code == 0, err
    from backend_core.orchestration.history import open_store

    with open_store(repo / ".cmlens" / "history.db", create=False) as store:
        recs = store.records("model.py")
    assert [r.commit for r in recs] == [commits[-1]] and recs[0].ok and recs[0].source == "lower"
    assert recs[0].metrics["fallbacks"] == 1                     # the last commit has the LayerNorm
    # every figure a backfill records, without --json too (issue 44: arena and RAM were missing)
    assert {"arena_bytes", "pte_bytes", "method_allocator_bytes"} <= set(recs[0].metrics), recs[0].metrics
    shutil.rmtree(repo / ".cmlens")


def test_lower_record_outside_git_stops_before_lowering(tmp_path: Path) -> None:
    """--record on a model outside a git repository: exit 2 with the cause and fix, before any lowering
    (check_record runs before the job), and no store is made."""
    import time

    from .conftest import model_text

    (tmp_path / "model.py").write_text(model_text(32, False, "loose"))
    t0 = time.perf_counter()
    code, out, err = cli("lower", tmp_path / "model.py", "--calib", "1", "--record")
    assert code == 2 and "is not inside a git repository" in err and "git init" in err, out + err
    assert "lowered" not in out.lower() and not (tmp_path / ".cmlens").exists()
    print(f"refused in {time.perf_counter() - t0:.2f} s")
