"""`cmlens history` on a repository made in the test (tests/history/conftest.py): backfill records the 8
commits without touching the work tree or index, `show` names commit 5 for the fallback and commit 7 for
the arena, `bisect` finds commit 5 after lowering at most 4 commits, bad input exits 2, and `gate
--history` gates a result against the branch's last record. Lowerings use `--calib 1` and the session's
lowering cache (the worktree of a commit has a stable path)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .helpers import cli, tree_state

FAST = ("--calib", "1", "--executor", "local")


@pytest.fixture(scope="module")
def backfilled(model_repo: tuple[Path, list[str]]) -> tuple[Path, list[str], str]:
    repo, commits = model_repo
    before = tree_state(repo)
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "8", *FAST)
    assert code == 0, err
    assert tree_state(repo) == before, "the backfill changed the user's work tree, index, HEAD or worktrees"
    return repo, commits, err


def test_backfill_records_every_commit_and_resumes(backfilled: tuple[Path, list[str], str]) -> None:
    repo, commits, err = backfilled
    assert "[8/8]" in err and "ETA" in err                    # progress with an ETA
    from backend_core.orchestration.history import open_store

    with open_store(repo / ".cmlens" / "history.db", create=False) as store:
        recs = store.records("model.py")
    assert sorted(r.commit for r in recs) == sorted(commits)
    assert all(r.ok and r.branch == "main" and r.versions.get("executorch") for r in recs)
    by = {r.commit: r for r in recs}
    assert by[commits[4]].subject == "Add a LayerNorm after fc1" and not by[commits[4]].dirty
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "8", *FAST)
    assert code == 0 and "skipped 8 already recorded" in out and "[1/" not in err


def test_show_names_commit_5_for_fallbacks_and_7_for_arena(backfilled: tuple[Path, list[str], str],
                                                           tmp_path: Path) -> None:
    repo, commits, _ = backfilled
    code, out, err = cli("history", "show", repo / "model.py", "--json", tmp_path / "h.json")
    assert code == 0, err
    data = json.loads((tmp_path / "h.json").read_text())
    changed = {}
    for c in data["changes"]:
        if c["kind"] == "metric":
            changed.setdefault(c["metric"], []).append(c["commit"])
    assert changed["fallbacks"] == [commits[4]]
    assert changed["fallback_op.aten.layer_norm"] == [commits[4]]
    assert commits[6] in changed["arena_bytes"] and changed["arena_bytes"][-1] == commits[6]
    arena = [r["metrics"]["arena_bytes"] for r in data["records"]]
    assert arena[6] > arena[5]                                       # widening fc1 grew the arena
    assert f"{commits[4][:8]} \"Add a LayerNorm after fc1\": fallbacks (user ops on portable kernels): 0 -> 1" in out
    assert f"{commits[6][:8]} \"Widen fc1 to 96\": arena peak (bytes)" in out
    for i in (1, 2, 3, 5, 7):                                        # comment-only commits change nothing deterministic
        assert not [c for c in data["changes"] if c["commit"] == commits[i] and c["metric"] != "lowering_s"]


def test_bisect_finds_commit_5_lowering_at_most_4(model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = model_repo
    store = tmp_path / "bisect.db"                                   # empty: every commit it needs is lowered
    code, out, err = cli("history", "bisect", repo / "model.py", "--metric", "fallbacks", "--good", commits[0],
                         "--bad", commits[7], "--calib", "1", "--history", store)
    assert code == 0, err
    assert f"first bad commit: {commits[4]}" in out and "Add a LayerNorm after fc1" in out
    lowered = int(out.split("lowered ")[1].split(" ")[0])
    assert lowered <= 4, out
    assert "fallbacks: 0 -> 1" in out and "layer_norm" in out       # the compare's summary names the user's op
    assert "not_annotated  [model.py:" in out and "cmlens-worktrees" not in out     # on the user's path
    code, out, _ = cli("history", "bisect", repo / "model.py", "--metric", "fallbacks", "--good", commits[0],
                       "--bad", commits[7], "--calib", "1", "--history", store)
    assert code == 0 and out.startswith("lowered 0 commit(s)")       # recorded commits are read, not lowered


def test_bisect_no_change_exits_1(backfilled: tuple[Path, list[str], str]) -> None:
    repo, commits, _ = backfilled
    code, out, err = cli("history", "bisect", repo / "model.py", "--metric", "fallbacks", "--good", commits[4],
                         "--bad", commits[7], "--calib", "1")
    assert code == 1 and "no change of fallbacks" in out, out + err
    code, out, err = cli("history", "bisect", repo / "model.py", "--metric", "arena_bytes", "--good", commits[4],
                         "--bad", commits[7], "--calib", "1", "--threshold", "200%")
    assert code == 1, out + err                                      # 288 -> 800 B is within +200 %


def test_bad_input_exits_2(model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = model_repo
    loose = tmp_path / "loose" / "model.py"
    loose.parent.mkdir()
    loose.write_text((repo / "model.py").read_text())
    code, _, err = cli("history", "backfill", loose, "--last", "2", *FAST)
    assert code == 2 and "not inside a git repository" in err
    code, _, err = cli("history", "backfill", repo / "model.py", "--range", "nosuch..HEAD", *FAST)
    assert code == 2 and "Unknown commit 'nosuch'" in err
    code, _, err = cli("history", "backfill", repo / "model.py", "--range", f"{commits[7]}..{commits[7]}", *FAST)
    assert code == 2 and "has no commits" in err
    code, _, err = cli("history", "bisect", repo / "model.py", "--metric", "fallbacks", "--good", commits[7],
                       "--bad", commits[0], "--calib", "1", "--history", tmp_path / "x.db")
    assert code == 2 and "not an ancestor" in err
    code, _, err = cli("history", "show", repo / "model.py", "--history", tmp_path / "none.db")
    assert code == 2 and "No history store at" in err and not (tmp_path / "none.db").exists()   # a read writes nothing
    from backend_core.orchestration.history import open_store

    open_store(tmp_path / "empty.db").close()
    code, _, err = cli("history", "show", repo / "model.py", "--history", tmp_path / "empty.db")
    assert code == 2 and "no record of model.py" in err
    assert not list((tmp_path / "loose").glob(".cmlens")), "nothing is written for a bad input"


def test_gate_against_the_branch_history(backfilled: tuple[Path, list[str], str], tmp_path: Path) -> None:
    repo, commits, _ = backfilled
    code, out, err = cli("gate", repo / "model.py", "--calib", "1", "--history", repo / ".cmlens" / "history.db",
                         "--branch", "main")
    assert code == 0, out + err
    assert f"main@{commits[7][:8]}" in out and "No regression." in out
    # a pull request that adds a second LayerNorm: gated against main's last record, exit 1 on the new fallback
    pr = tmp_path / "pr"
    subprocess.run(["git", "clone", "-q", str(repo), str(pr)], check=True)
    text = (pr / "model.py").read_text().replace("return self.fc2(x)", "return self.fc2(self.ln(x))")
    (pr / "model.py").write_text(text)
    code, out, err = cli("gate", pr / "model.py", "--calib", "1", "--history", repo / ".cmlens" / "history.db",
                         "--branch", "main", "--no-new-fallbacks")
    assert code == 1 and "FAIL  new fallbacks: 1" in out, out + err
    code, out, err = cli("gate", repo / "model.py", "--history", repo / ".cmlens" / "history.db", "--branch", "dev")
    assert code == 2 and "on branch dev" in err


def test_show_html_opens_each_commits_report_and_each_changes_compare(backfilled: tuple[Path, list[str], str],
                                                                      tmp_path: Path) -> None:
    """--reports: the store keeps each lowering's report, so the pages are written without lowering again."""
    repo, commits, _ = backfilled
    out = tmp_path / "trends.html"
    code, text, err = cli("history", "show", repo / "model.py", "--html", out, "--reports")
    assert code == 0, err
    files = tmp_path / "trends_files"
    assert sorted(p.name for p in files.glob("*.html") if "-vs-" not in p.name) == sorted(f"{c[:12]}.html" for c in commits)
    five = files / f"{commits[4][:12]}-vs-{commits[3][:12]}.html"
    seven = files / f"{commits[6][:12]}-vs-{commits[5][:12]}.html"
    assert five.exists() and seven.exists()
    page = five.read_text()
    assert "fallbacks added on" in page and "layer_norm" in page and "model.py:" in page
    assert "cmlens-worktrees" not in (files / f"{commits[4][:12]}.html").read_text()      # the user's paths
    assert f"trends_files/{commits[4][:12]}-vs-{commits[3][:12]}.html" in out.read_text()  # the change's link
