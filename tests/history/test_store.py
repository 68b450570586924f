"""The history store itself: migrations (an old store opens after an upgrade; a newer one is refused with
both version numbers and left unchanged), two processes writing one SQLite file at once, and JSON lines
export/import. No lowering: records are made here."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from backend_core.orchestration.history import Record, StoreTooNewError, open_store
from backend_core.orchestration.history.schema import SCHEMA_VERSION

from .helpers import cli


def rec(commit: str, **metrics: float) -> Record:
    return Record(model="model.py", name="model", config="cortex-m55 legacy int8", commit=commit,
                  metrics=dict(metrics), versions={"executorch": "1.5.1"}, commit_date=f"2026-11-0{commit[-1]}")


def test_old_schema_is_migrated_on_open(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    open_store(db, upgrade_to="0001").close()                    # a store as the first schema left it
    eng = sa.create_engine(f"sqlite:///{db}")
    with eng.begin() as c:
        cols = {col["name"] for col in sa.inspect(c).get_columns("records")}
        assert "extra" not in cols
        c.execute(sa.text("INSERT INTO records (model, name, config, \"commit\", dirty, status, metrics, versions, "
                          "recorded_at) VALUES ('model.py', 'model', 'k', 'c1', 0, 'ok', '{\"fallbacks\": 2}', '{}', "
                          "'2026-11-01T00:00:00')"))
    eng.dispose()
    with open_store(db) as store:                                  # upgraded to the head revision
        (r,) = store.records("model.py")
        assert r.metrics == {"fallbacks": 2} and r.extra is None
        with store.engine.connect() as c:
            assert c.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == f"{SCHEMA_VERSION:04d}"


def test_newer_schema_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with open_store(db) as store:
        store.add(rec("c1", fallbacks=1))
        with store.engine.begin() as c:
            c.execute(sa.text("UPDATE alembic_version SET version_num = '0007'"))
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    with pytest.raises(StoreTooNewError) as e:
        open_store(db)
    assert "schema version 7" in e.value.message and f"up to {SCHEMA_VERSION}" in e.value.message
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    code, _, err = cli("history", "export", "--history", db)
    assert code == 2 and "schema version 7" in err


_WRITER = """
import sys
from backend_core.orchestration.history import Record, open_store
db, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(db)
for i in range(n):
    store.add(Record(model="model.py", name="model", config="k", commit=f"{tag}{i:04d}", metrics={"i": i}))
store.close()
"""


def test_two_processes_recording_at_once_both_land(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(db), tag, "150"], cwd=Path(__file__).parents[2],
                              stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    with open_store(db) as store:
        commits = store.recorded_commits("model.py", "k")
    assert len(commits) == 300 and {c[0] for c in commits} == {"a", "b"}


def test_export_import_round_trip_and_replace(tmp_path: Path) -> None:
    a, b = tmp_path / "runner1.db", tmp_path / "main.db"
    with open_store(a) as store:
        store.add_many([rec("c1", fallbacks=0), rec("c2", fallbacks=1)])
    with open_store(b) as store:
        store.add(rec("c2", fallbacks=5))                           # the same key: replaced by the import
    code, _, err = cli("history", "export", "--history", a, "-o", tmp_path / "r1.jsonl")
    assert code == 0, err
    code, out, err = cli("history", "import", tmp_path / "r1.jsonl", "--history", b)
    assert code == 0 and "imported 2 record(s)" in out, err
    with open_store(b) as store:
        got = {r.commit: r.metrics for r in store.records("model.py")}
    assert got == {"c1": {"fallbacks": 0}, "c2": {"fallbacks": 1}}
    (tmp_path / "bad.jsonl").write_text('{"model": "m"}\nnot json\n')
    code, _, err = cli("history", "import", tmp_path / "bad.jsonl", "--history", b)
    assert code == 2 and "line 1" in err
    with open_store(b) as store:
        assert len(store.records()) == 2                            # nothing half-written
