"""Issue 44, item 4: a damaged store is bad input. Junk over its first 4 KB, a text file given as the store,
junk over pages in the middle: every history subcommand, `gate --history` and `lower --record` say which
file and why in one message, exit 2, no traceback; the History tab says it in its message line."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from backend_core.orchestration.history import Record, open_store

from .conftest import model_text
from .helpers import cli
from .test_history_order import CONFIG, quick_repo

DAMAGES = ("head", "text", "middle")


def damage(db: Path, how: str) -> None:
    """Junk over the header page, a text file in its place, or junk over the pages in the middle."""
    data = bytearray(db.read_bytes())
    rnd = random.Random(44)
    if how == "head":
        data[:4096] = bytes(rnd.randrange(256) for _ in range(4096))
    elif how == "text":
        data = bytearray(b"this is my notes file, not a database\n" * 300)
    else:
        lo, hi = len(data) * 2 // 5 // 4096 * 4096, len(data) * 3 // 5 // 4096 * 4096
        data[lo:hi] = bytes(rnd.randrange(256) for _ in range(hi - lo))
    db.write_bytes(bytes(data))
    for extra in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        extra.unlink(missing_ok=True)


@pytest.fixture()
def repo_and_store(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, list[str], Path]:
    """A repository with a real model file and a store of 300 records (a few pages), then damaged."""
    repo = tmp_path / "repo"
    commits = quick_repo(repo, ["one", "two"])
    (repo / "model.py").write_text(model_text(32, False, "v"))
    from .conftest import git

    git(repo, "commit", "-q", "-am", "a real model")
    store = tmp_path / "history.db"
    with open_store(store) as s:
        s.add_many([Record(model="model.py", name="model", config=CONFIG, commit=f"{i:040x}", subject=f"c{i}",
                           metrics={"fallbacks": i % 3, "arena_bytes": 1000 + i}) for i in range(300)])
    damage(store, request.param)
    return repo, commits, store


def one_message(code: int, out: str, err: str, store: Path) -> None:
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err and "sqlalchemy" not in (out + err).lower(), err
    assert f"The history store {store} is damaged" in err, err
    assert len(err.strip().splitlines()) <= 3, err


@pytest.mark.parametrize("repo_and_store", DAMAGES, indirect=True)
def test_every_history_command_says_the_store_is_damaged(repo_and_store: tuple[Path, list[str], Path],
                                                         tmp_path: Path) -> None:
    repo, commits, store = repo_and_store
    model = repo / "model.py"
    line = Record(model="model.py", name="model", config=CONFIG, commit="e" * 40, metrics={"fallbacks": 1})
    (tmp_path / "in.jsonl").write_text(__import__("json").dumps(line.to_dict()) + "\n")
    for argv in (("history", "show", model, "--history", store),
                 ("history", "export", "--history", store),
                 ("history", "import", tmp_path / "in.jsonl", "--history", store),
                 ("history", "backfill", model, "--last", "1", "--executor", "local", "--history", store),
                 ("history", "bisect", model, "--metric", "fallbacks", "--good", commits[0], "--bad", "HEAD",
                  "--executor", "local", "--history", store),
                 ("history", "add", tmp_path / "report.json", "--model", model, "--history", store)):
        if argv[1] == "add":
            (tmp_path / "report.json").write_text('{"status": "done", "stages": [], "target": "cortex-m55"}')
        code, out, err = cli(*argv)
        one_message(code, out, err, store)


@pytest.mark.parametrize("repo_and_store", ["middle"], indirect=True)
def test_record_and_gate_refuse_a_damaged_store_before_lowering(repo_and_store: tuple[Path, list[str], Path]) -> None:
    """`--record` and `gate --history` open the store before any work: one message, exit 2."""
    repo, _commits, store = repo_and_store
    code, out, err = cli("lower", repo / "model.py", "--calib", "1", "--history", store)
    one_message(code, out, err, store)
    assert "lowered" not in out.lower()
    code, out, err = cli("gate", repo / "model.py", "--calib", "1", "--history", store)
    one_message(code, out, err, store)


@pytest.mark.parametrize("repo_and_store", ["head"], indirect=True)
def test_the_history_tab_says_the_store_is_damaged(qtbot, repo_and_store: tuple[Path, list[str], Path]) -> None:
    _repo, _commits, store = repo_and_store
    from app.history import HistoryView

    view = HistoryView()
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.message, timeout=30_000,
                          check_params_cb=lambda text: "damaged" in text) as sig:
        view.open_store(str(store))
    text = sig.args[0]
    assert str(store) in text and "Traceback" not in text and "Error:" not in text, text
    assert view.data is None and view.info.text() == text
    view.shutdown()


def test_a_kept_report_overwritten_is_named(tmp_path: Path) -> None:
    """Junk in a kept report's bytes (the gzip blob): the commit is named, the store too; exit 2."""
    import sqlalchemy as sa

    from backend_core.orchestration.history.damage import StoreDamagedError

    store = tmp_path / "h.db"
    rec = Record(model="model.py", name="model", config=CONFIG, commit="a" * 40)
    with open_store(store) as s:
        s.add(rec, {"status": "done", "stages": [{"nodes": []}]})
        with s.engine.begin() as c:
            c.execute(sa.text("UPDATE reports SET report_gz = :b"), {"b": os.urandom(64)})
        with pytest.raises(StoreDamagedError) as e:
            s.report("model.py", CONFIG, "a" * 40)
    assert str(store) in e.value.message and "aaaaaaaa" in e.value.message
