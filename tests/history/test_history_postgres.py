"""The same backfill and show against a real PostgreSQL server started by the test (initdb + pg_ctl in a
temporary folder, as the postgres user when the suite runs as root); skipped with the reason where none
can start. Also a newer schema refused there, as on SQLite."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
import sqlalchemy as sa

from .helpers import cli, tree_state
from .postgres_server import PostgresServer


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    server = PostgresServer()
    why = server.unavailable()
    if why:
        pytest.skip(why)
    try:
        url = server.start()
    except RuntimeError as exc:
        server.stop()
        pytest.skip(f"no PostgreSQL server could start here: {exc}")
    yield url
    server.stop()


def test_backfill_and_show_on_postgresql(pg_url: str, model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = model_repo
    before = tree_state(repo)
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "8", "--calib", "1",
                         "--executor", "local", "--history", pg_url)
    assert code == 0, err
    assert "recorded 8 commit(s)" in out and tree_state(repo) == before
    code, out, err = cli("history", "show", repo / "model.py", "--history", pg_url, "--json", tmp_path / "h.json")
    assert code == 0, err
    data = json.loads((tmp_path / "h.json").read_text())
    fb = [c["commit"] for c in data["changes"] if c["kind"] == "metric" and c["metric"] == "fallbacks"]
    arena = [c["commit"] for c in data["changes"] if c["kind"] == "metric" and c["metric"] == "arena_bytes"]
    assert fb == [commits[4]] and arena[-1] == commits[6]
    assert "127.0.0.1" in out                                      # the store named (without a password)
    code, out, err = cli("history", "bisect", repo / "model.py", "--metric", "fallbacks", "--good", commits[0],
                         "--bad", commits[7], "--calib", "1", "--history", pg_url)
    assert code == 0 and f"first bad commit: {commits[4]}" in out and out.startswith("lowered 0 commit(s)"), out + err


def test_newer_schema_refused_on_postgresql(pg_url: str) -> None:
    from backend_core.orchestration.history import StoreTooNewError, open_store
    from backend_core.orchestration.history.store import store_url

    url = pg_url.rsplit("/", 1)[0] + "/newer"
    eng = sa.create_engine(store_url(pg_url), isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(sa.text("CREATE DATABASE newer"))
    eng.dispose()
    open_store(url).close()
    eng = sa.create_engine(store_url(url))
    with eng.begin() as c:
        c.execute(sa.text("UPDATE alembic_version SET version_num = '0009'"))
    eng.dispose()
    with pytest.raises(StoreTooNewError) as e:
        open_store(url)
    assert "schema version 9" in e.value.message


def test_lower_record_on_postgresql(pg_url: str, model_repo: tuple[Path, list[str]]) -> None:
    """`cmlens lower --record --history postgresql://...`: the store opened before the job, the record's
    commit on a thread while the report is encoded; both land, and the kept report reads back."""
    from backend_core.orchestration.history import open_store

    repo, commits = model_repo
    code, _out, err = cli("lower", repo / "model.py", "--calib", "1", "--history", pg_url)
    assert code == 0 and "recorded model.py @" in err, err
    with open_store(pg_url) as store:
        rec = next(c for m, c, _ in store.models() if m == "model.py" and "env=" not in c)
        got = store.get("model.py", rec, commits[-1])
        report = store.report("model.py", rec, commits[-1])
    assert got is not None and got.ok and got.source == "lower" and got.metrics["fallbacks"] == 1
    assert report is not None and report["status"] == "done" and "nodes" in report["stages"][-1]
