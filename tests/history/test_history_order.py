"""Issue 44, items 1 and 3: a series is ordered by the git graph, not by dates or by the order its records
were written in. Four commits made within one second tie on their dates; a backfill's pool finishes them as
it likes (here: the last commit first). `history show`, the History tab and `gate --history`'s baseline
all take their order from `trends.ordered`, so they name the commit that brought the change. Records are
made here (no lowering); the repositories are real ones made in tmp dirs."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from backend_core.orchestration.history import Record, load_history, open_store, ordered

from .conftest import git
from .helpers import cli

SECOND = "2026-11-20T09:30:00+00:00"            # every commit of a repository here: the same second
SUBJECTS = ["Add the model", "Reword a comment", "Add a LayerNorm", "Add a docstring"]
CONFIG = "cortex-m55 legacy int8"


def quick_repo(root: Path, subjects: list[str] = SUBJECTS, branch: str = "main") -> list[str]:
    """A repository whose commits all carry one committer and author date (made within a second)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", branch)
    out = []
    for i, subject in enumerate(subjects):
        (root / "model.py").write_text(f"# {i}: {subject}\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", subject, date=SECOND)
        out.append(git(root, "rev-parse", "HEAD").strip())
    return out


def side(model: str = "model") -> "SideFacts":  # noqa: F821 - imported lazily, as the faces do
    """A lowering's compare facts with no op: enough for the gate to find its series (target, flow, options)."""
    from backend_core.orchestration.compare.facts import PROV_FULL, SideFacts

    return SideFacts(label="x", kind="report", model=model, source="model.py", target="cortex-m55", flow="legacy",
                     options={"activations": "int8"}, versions={}, provenance=PROV_FULL, groups=[])


def records_of(repo: Path, commits: list[str], fallbacks: list[int], branch: str = "main") -> list[Record]:
    """A record per commit as a backfill writes it: same commit date, written last commit first (a pool's
    lowerings finishing out of order), each `recorded_at` after the one before."""
    recs = []
    for n, i in enumerate(reversed(range(len(commits)))):
        recs.append(Record(model="model.py", name="model", config=CONFIG, commit=commits[i], commit_date=SECOND,
                           subject=SUBJECTS[i], branch=branch, repo=str(repo), source="backfill",
                           recorded_at=f"2026-11-20T09:31:{n:02d}+00:00",
                           metrics={"fallbacks": fallbacks[i], "arena_bytes": 80 + 208 * fallbacks[i]},
                           versions={"executorch": "1.5.1"}, facts=side().to_dict()))
    return recs


@pytest.fixture()
def tied(tmp_path: Path) -> tuple[Path, list[str], Path]:
    repo = tmp_path / "repo"
    commits = quick_repo(repo)
    store = tmp_path / "history.db"
    with open_store(store) as s:
        for r in records_of(repo, commits, [0, 0, 1, 1]):
            s.add(r)
    return repo, commits, store


def test_ordered_follows_the_graph_when_dates_tie(tied: tuple[Path, list[str], Path]) -> None:
    repo, commits, store = tied
    with open_store(store, create=False) as s:
        raw = s.records("model.py")
        assert [r.commit for r in raw] != commits          # what the store returns: written order, not commits'
        # with the repository given, and (the window's case) from the repository the records name
        assert [r.commit for r in ordered(raw, repo)] == commits
        assert [r.commit for r in ordered(raw)] == commits
        h = load_history(s, "model.py")
    (fb,) = [c for c in h.changes if c.metric == "fallbacks"]
    assert fb.commit == commits[2] and fb.subject == "Add a LayerNorm" and fb.parent == commits[1]


def test_ordered_puts_a_merged_branch_after_its_fork_point(tmp_path: Path) -> None:
    """Commits of a side branch merged into main, all in one second: every parent before its child."""
    repo = tmp_path / "repo"
    base = quick_repo(repo, ["base"])
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "side work", date=SECOND)
    side = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    (repo / "main.txt").write_text("main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main work", date=SECOND)
    main = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", date=SECOND)
    merge = git(repo, "rev-parse", "HEAD").strip()
    recs = [Record(model="m", name="m", config=CONFIG, commit=c, commit_date=SECOND, recorded_at=SECOND)
            for c in (merge, side, main, base[0])]
    got = [r.commit for r in ordered(recs, repo)]
    assert got[0] == base[0] and got[-1] == merge and set(got[1:3]) == {side, main}
    gone = Record(model="m", name="m", config=CONFIG, commit="f" * 40, commit_date="2026-11-19", recorded_at=SECOND)
    assert ordered([gone, *recs], repo)[-1] is gone       # a commit the repository lacks: after the known ones


def test_history_show_names_the_commit_in_graph_order(tied: tuple[Path, list[str], Path]) -> None:
    repo, commits, store = tied
    code, out, err = cli("history", "show", repo / "model.py", "--history", store)
    assert code == 0, err
    rows = [ln for ln in out.splitlines() if ln[:3].strip().isdigit()]
    assert [ln.split()[1] for ln in rows] == [c[:8] for c in commits], out
    assert f'#3 {commits[2][:8]} "Add a LayerNorm": fallbacks' in out, out


def test_the_history_tab_orders_and_blames_by_the_graph(qtbot, tied: tuple[Path, list[str], Path]) -> None:
    """The real window: the x axis reads the commits in commit order, the change names commit 3."""
    repo, commits, store = tied
    from app.shell.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    win.show_tab("history")
    view = win.history
    view.open_store(str(store))
    qtbot.waitUntil(lambda: view.data is not None, timeout=30_000)
    assert [r.commit for r in view.data.history.records] == commits
    import pyqtgraph as pg

    plot = next(p for p in view.charts.findChildren(pg.PlotWidget) if p.objectName() == "history:fallbacks")
    ticks = plot.getAxis("bottom")._tickLevels[0]
    assert [label for _x, label in ticks] == [c[:7] for c in commits]
    texts = [view.changes.item(i).text() for i in range(view.changes.count())]
    assert any(t.startswith(commits[2][:8]) and "fallbacks" in t and "Add a LayerNorm" in t for t in texts), texts
    assert not any("Add a docstring" in t for t in texts), texts
    win.shutdown()
    win.close()


def test_gate_baseline_is_the_last_commit_in_graph_order(tied: tuple[Path, list[str], Path]) -> None:
    """Main's last record is the newest commit in the graph, though it was written first."""
    from backend_core.orchestration.history.gate_base import baseline_from_history
    from backend_core.orchestration.history.git import locate

    repo, commits, store = tied
    facts = side()
    with open_store(store, create=False) as s:
        _base, rec = baseline_from_history(s, facts, "main", locate(str(repo / "model.py")))
    assert rec.commit == commits[-1]


def test_the_default_branch_is_the_repositorys_own(tmp_path: Path) -> None:
    """Item 3: records on `master`, no --branch: the repository's own default branch (here master, the only
    one); an asked branch without records names the branches that have them."""
    from backend_core.common.errors import BadInputError
    from backend_core.orchestration.history.gate_base import baseline_from_history
    from backend_core.orchestration.history.git import default_branch, locate

    repo = tmp_path / "repo"
    commits = quick_repo(repo, branch="master")
    assert default_branch(repo) == "master"
    store = tmp_path / "history.db"
    with open_store(store) as s:
        for r in records_of(repo, commits, [0, 0, 1, 1], branch="master"):
            s.add(r)
    git(repo, "checkout", "-q", "-b", "feature")
    facts = side()
    model = locate(str(repo / "model.py"))
    with open_store(store, create=False) as s:
        _b, rec = baseline_from_history(s, facts, None, model)
        assert rec.commit == commits[-1] and rec.branch == "master"
        with pytest.raises(BadInputError) as e:
            baseline_from_history(s, facts, "main", model)
    assert "on branch main" in e.value.message and "records of it on: master" in e.value.message
    assert "--branch master" in e.value.hint


def test_pick_branch_between_several() -> None:
    """The default branch when it has records; else the one other than the branch checked out; else none."""
    from backend_core.orchestration.history.gate_base import pick_branch

    assert pick_branch("dev", ["dev", "main"], None) == ("dev", "")
    assert pick_branch(None, ["release"], None) == ("release", "")
    branch, why = pick_branch(None, ["a", "b"], None)
    assert branch is None and "default branch" in why


def test_default_branch_follows_origins_head(tmp_path: Path) -> None:
    """A clone's default branch is the one origin's HEAD names, even when it is neither main nor master."""
    from backend_core.orchestration.history.git import default_branch

    up = tmp_path / "up"
    quick_repo(up, ["one"], branch="trunk-2026")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(up), str(clone)], check=True, capture_output=True)
    git(clone, "checkout", "-q", "-b", "feature")
    assert default_branch(clone) == "trunk-2026"


def test_history_show_gives_subjects_the_terminals_room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44, item 17: subjects were cut at 28 characters on a terminal with room for all of them."""
    long = "Replace the first convolution by a depthwise-separable pair"          # 59 characters
    repo = tmp_path / "repo"
    commits = quick_repo(repo, ["Add the model", long])
    store = tmp_path / "history.db"
    with open_store(store) as s:
        for i, c in enumerate(commits):
            s.add(Record(model="model.py", name="model", config=CONFIG, commit=c, subject=["Add the model", long][i],
                         commit_date=SECOND, repo=str(repo), metrics={"fallbacks": 0, "arena_bytes": 80}))
    monkeypatch.setenv("COLUMNS", "160")
    code, out, err = cli("history", "show", repo / "model.py", "--history", store)
    assert code == 0 and f"{commits[1][:8]}  2026-11-20  {long}  " in out, out + err
    assert max(len(ln) for ln in out.splitlines()[:5]) <= 160
    monkeypatch.setenv("COLUMNS", "80")                       # no room: 28 characters, the cut marked
    code, out, err = cli("history", "show", repo / "model.py", "--history", store)
    assert code == 0 and f"  {long[:27]}…" in out, out
