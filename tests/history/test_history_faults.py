"""Faults: a commit whose model does not import is recorded as a failure with its cause (a point, not a
gap), bisect counts it bad only when asked, a killed backfill resumes where it stopped (its stale
worktree cleaned up), and `--record` / `history add` key a result by the repository's commit with the
dirty flag of the tree that was lowered."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import git, model_text
from .helpers import cli, tree_state

FAST = ("--calib", "1", "--executor", "local")

pytestmark = pytest.mark.timeout(600)        # worker processes: a hang fails the test, never the suite


@pytest.fixture(scope="module")
def broken_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """c1 ok, c2 a syntax error, c3 fixed with a LayerNorm (a fallback), c4 a comment."""
    root = tmp_path_factory.mktemp("faults") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    texts = [model_text(32, False, "v1"), model_text(32, False, "v2").replace("def forward(self, x):", "def forward(self, x)"),
             model_text(32, True, "v3"), model_text(32, True, "v4")]
    commits = []
    for i, text in enumerate(texts):
        (root / "model.py").write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", ["Start", "Break the syntax", "Fix it, add a LayerNorm", "Comment"][i],
            date=f"2026-10-{i + 1:02d}T12:00:00+00:00")
        commits.append(git(root, "rev-parse", "HEAD").strip())
    return root, commits


def test_failure_is_a_recorded_point_and_bisect_asks(broken_repo: tuple[Path, list[str]]) -> None:
    repo, commits = broken_repo
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "4", *FAST)
    assert code == 0 and "recorded 4 commit(s) (1 failed to lower)" in out, out + err
    from backend_core.orchestration.history import open_store

    with open_store(repo / ".cmlens" / "history.db") as store:
        bad = store.get("model.py", "cortex-m55 legacy int8 calib=1", commits[1])
    assert bad is not None and bad.status == "failed"
    assert bad.error["message"].startswith("model.py has a syntax error at line 15")     # the cause, in the user's path
    code, out, err = cli("history", "show", repo / "model.py")
    assert code == 0 and "FAILED:" in out and "lowering ok -> failed" in out
    assert f"{commits[2][:8]} \"Fix it, add a LayerNorm\": fallbacks (user ops on portable kernels): 0 -> 1" in out
    args = ("history", "bisect", repo / "model.py", "--metric", "fallbacks", "--good", commits[0], "--bad", commits[3],
            "--calib", "1")
    code, out, err = cli(*args)                                    # default: a failure is skipped
    assert code == 0 and f"first bad commit: {commits[2]}" in out, out + err
    assert f"note: {commits[1][:8]} between {commits[0][:8]} and it failed to lower and were skipped" in out
    code, out, err = cli(*args, "--failures", "bad")
    assert code == 0 and f"first bad commit: {commits[1]}" in out and "it fails to lower" in out, out + err


def test_killed_backfill_resumes(broken_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = broken_repo
    db = tmp_path / "killed.db"
    before = tree_state(repo)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "history", "backfill", str(repo / "model.py"), "--last",
                             "4", *FAST, "--history", str(db)], cwd=Path(__file__).parents[2],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    from backend_core.orchestration.history import open_store

    deadline = time.monotonic() + 180
    n = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            with open_store(db) as store:
                n = len(store.records())
            if n >= 1:
                break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert 1 <= n < 4, f"the backfill recorded {n} before it was killed"
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "4", *FAST, "--history", db)
    assert code == 0, err
    with open_store(db) as store:
        assert len(store.records()) == 4
    skipped = int(out.split("skipped ")[1].split(" ")[0])
    assert skipped >= n and f"recorded {4 - skipped} commit(s)" in out
    assert tree_state(repo) == before                             # no worktree left registered by the killed run


def test_record_and_add_key_by_commit_and_dirty(broken_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = broken_repo
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    (clone / "model.py").write_text((clone / "model.py").read_text().replace("WIDTH = 32", "WIDTH = 48"))
    from backend_core.orchestration.execute.inprocess import run_in_process
    from backend_core.orchestration.history import open_store, record_job_result
    from backend_core.orchestration.jobs import Job, LowerRequest

    res = run_in_process(Job(str(clone / "model.py"), LowerRequest(calib=1), steps=("lower", "memory")))
    rec = record_job_result(res, str(clone / "model.py"), str(tmp_path / "r.db"))
    assert rec.commit == commits[3] and rec.dirty and rec.ok and rec.metrics["fallbacks"] == 1
    assert rec.facts and rec.subject == "Comment" and rec.branch == "main"
    code, out, err = cli("lower", clone / "model.py", "--calib", "1", "--json", tmp_path / "low.json")
    assert code == 0, err
    code, out, err = cli("history", "add", tmp_path / "low.json", "--model", clone / "model.py",
                         "--commit", commits[0], "--history", tmp_path / "r.db")
    assert code == 0 and f"@ {commits[0][:8]}" in out, err
    with open_store(tmp_path / "r.db") as store:
        added = store.get("model.py", "cortex-m55 legacy int8 calib=1", commits[0])
    assert added is not None and added.source == "add" and added.metrics["arena_bytes"] == rec.metrics["arena_bytes"]
    code, _, err = cli("history", "add", tmp_path / "low.json", "--model", clone / "model.py", "--commit", "nosuch",
                       "--history", tmp_path / "r.db")
    assert code == 2 and "Unknown commit" in err


def test_a_target_runs_checkout_and_cmsis_nn_commits_are_versions(broken_repo: tuple[Path, list[str]]) -> None:
    """A run's environment (the ExecuTorch checkout, a CMSIS-NN tree kept in git) is recorded, and a change
    of either is a version change like a package's."""
    from types import SimpleNamespace

    from backend_core.orchestration.history.git import locate
    from backend_core.orchestration.history.record import record_of_result, target_provenance
    from backend_core.orchestration.history.trends import VERSION, changes
    from backend_core.orchestration.jobs import Job, JobResult
    from backend_core.target.toolchain.checkout import Checkout, CmsisNn

    repo, commits = broken_repo
    recs = []
    for et in ("aaa111", "bbb222"):
        env = SimpleNamespace(checkout=Checkout(Path("/et"), "--et-root", "1.5.1", et, "1.5.1"),
                              cmsis=CmsisNn(repo, "--cmsis-nn"))       # any git tree stands for CMSIS-NN here
        assert target_provenance(env)["cmsis_nn"]["commit"] == commits[-1]
        res = JobResult(Job(str(repo / "model.py")), status="failed", error={"message": "x"})
        res.run_environment = env
        recs.append(record_of_result(res, locate(str(repo / "model.py"))))
    assert recs[0].versions["executorch-checkout"] == "aaa111" and recs[0].versions["cmsis-nn"] == commits[-1]
    assert [(c.metric, c.before, c.after) for c in changes(recs) if c.kind == VERSION] == \
        [("executorch-checkout", "aaa111", "bbb222")]
