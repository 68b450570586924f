"""The history store: SQLAlchemy 2 over one SQLite file by default, or a PostgreSQL server
(`--history postgresql://...`), with the same code for both.

Opening a store runs the Alembic migrations shipped in `migrations/` up to this cmlens's schema; a store
written by a newer cmlens is refused with both version numbers (never altered). SQLite runs in WAL mode
with a busy timeout, and every write is retried while another process holds the lock, so two processes
recording at once both land."""
from __future__ import annotations

import contextlib
import gzip
import json
import os
import random
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine

from backend_core.common.errors import BadInputError
from backend_core.orchestration.history.damage import StoreDamagedError, check_records, damaged, watch_for_damage
from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.packing import pack_report, unpack_report
from backend_core.orchestration.history.schema import COLUMNS, SCHEMA_VERSION, records, reports

T = TypeVar("T")
_MIGRATIONS = Path(__file__).with_name("migrations")
_LOCK_WORDS = ("database is locked", "database is busy", "deadlock detected", "could not serialize")


class StoreTooNewError(BadInputError):
    """The store was written by a newer schema than this cmlens reads (exit 2)."""


def store_url(spec: str | os.PathLike[str]) -> str:
    """A URL (`sqlite:///...`, `postgresql://...`) as given; a plain path is a SQLite file. A bare
    `postgresql://` URL is given the psycopg 3 driver."""
    text = str(spec)
    if "://" not in text:
        return "sqlite:///" + str(Path(text).expanduser().resolve())
    if text.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    return text


def _sqlite_pragmas(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")     # WAL's own advice: never corrupts; a power cut may lose
        cur.execute("PRAGMA busy_timeout=30000")     # the last record, not an application crash (one fsync less)
        cur.close()


def retrying(work: Callable[[], T], *, seconds: float = 60.0) -> T:
    """Run `work` again while the database says another writer holds it (SQLite's lock, PostgreSQL's
    serialisation failures), with a jittered back-off; any other error is raised at once."""
    deadline = time.monotonic() + seconds
    delay = 0.02
    while True:
        try:
            return work()
        except sa.exc.OperationalError as exc:
            text = str(exc).lower()
            if not any(w in text for w in _LOCK_WORDS) or time.monotonic() > deadline:
                raise
        time.sleep(delay * (1 + random.random()))
        delay = min(delay * 2, 0.5)


def encode_report(report: dict[str, Any]) -> bytes:
    """A kept report as stored: packed (packing.py), JSON, gzip level 1."""
    return gzip.compress(json.dumps(pack_report(report), default=str, separators=(",", ":"),
                                    check_circular=False).encode(), 1)


class HistoryStore:
    """One open store. Use as a context manager, or call `close()`."""

    def __init__(self, url: str, engine: Engine) -> None:
        self.url = url
        self.engine = engine

    @property
    def where(self) -> str:
        """The store for messages: the file for SQLite, the URL without a password otherwise."""
        u = self.engine.url
        return (u.database or "") if u.get_backend_name() == "sqlite" else u.render_as_string(hide_password=True)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "HistoryStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- writing -----------------------------------------------------------------------------------
    def add(self, rec: Record, report: dict[str, Any] | None = None) -> None:
        """Insert, or replace the record of the same (model, config, commit); with its lowering report
        (kept packed and gzip-compressed, so the commit's lowering opens again without lowering it)."""
        self.add_many([rec], {rec.commit: report} if report else None)

    def _upsert(self, table: sa.Table, columns: Iterable[str]) -> Any:
        dialect = self.engine.dialect.name
        insert: Any                             # the dialect's INSERT with ON CONFLICT
        if dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        elif dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            raise BadInputError(f"History stores on {dialect} are not supported.", "Use SQLite or PostgreSQL.")
        stmt = insert(table)
        keys = ("model", "config", "commit")
        return stmt.on_conflict_do_update(index_elements=list(keys),
                                          set_={c: stmt.excluded[c] for c in columns if c not in keys})

    def _fuller(self, recs: Iterable[Record]) -> list[Record]:
        """Each record, keeping the figures a record of the same commit already holds and it lacks (merge.py);
        the records already there read in one query per series and 500 commits (an import of 3,000 lines
        asked one by one took 8.5 s)."""
        from backend_core.orchestration.history.merge import fuller

        recs = list(recs)
        have: dict[tuple[str, str, str], Record] = {}
        series: dict[tuple[str, str], list[str]] = {}
        for r in recs:
            series.setdefault((r.model, r.config), []).append(r.commit)
        for (model, config), commits in series.items():
            for i in range(0, len(commits), 500):
                for old in self._select(sa.and_(records.c.model == model, records.c.config == config,
                                                records.c.commit.in_(commits[i:i + 500]))):
                    have[(old.model, old.config, old.commit)] = old
        return [fuller(have.get((r.model, r.config, r.commit)), r) for r in recs]

    def add_many(self, recs: Iterable[Record], reports_by_commit: dict[str, dict[str, Any]] | None = None) -> int:
        recs = self._fuller(recs)
        rows = [{k: getattr(r, k) for k in COLUMNS} for r in recs]
        if not rows:
            return 0
        stmt = self._upsert(records, COLUMNS)
        rep_rows = [{"model": r.model, "config": r.config, "commit": r.commit,
                     "report_gz": encode_report(reports_by_commit[r.commit])}
                    for r in recs if reports_by_commit and reports_by_commit.get(r.commit)]
        rep_stmt = self._upsert(reports, ("model", "config", "commit", "report_gz")) if rep_rows else None

        def write() -> None:
            with self.engine.begin() as conn:
                conn.execute(stmt, rows)
                if rep_stmt is not None:
                    conn.execute(rep_stmt, rep_rows)
        retrying(write)
        return len(rows)

    def add_overlapped(self, rec: Record, report: dict[str, Any]) -> None:
        """`add(rec, report)` for `--record`, in two transactions: the record's commit (the disk's fsyncs
        or a server's round trip, the GIL released) runs on a thread while this one encodes the report,
        which follows in its own. A reader in between sees the record without its report, as a record of
        schema 2. On SQLite a commit waits for no disk (WAL with synchronous=NORMAL: the fsyncs come at the
        checkpoint), so there is nothing to overlap: the thread's start and the GIL's hand-offs cost more
        (3 of a small model's 13 ms), and both go in one transaction."""
        if self.engine.dialect.name == "sqlite":
            self.add_many([rec], {rec.commit: report})
            return
        import threading
        from concurrent.futures import ThreadPoolExecutor

        rec = self._fuller([rec])[0]
        stmt, row = self._upsert(records, COLUMNS), {k: getattr(rec, k) for k in COLUMNS}
        inserted = threading.Event()

        def write() -> None:
            with self.engine.begin() as conn:
                conn.execute(stmt, [row])
                inserted.set()                   # what is left is the commit: the encoding runs beside it
        with ThreadPoolExecutor(1, thread_name_prefix="cmlens-record") as pool:
            done = pool.submit(retrying, write)
            while not inserted.wait(0.05) and not done.done():
                pass
            try:
                blob = encode_report(report)
            finally:
                done.result()
        self.add_encoded_report(rec, blob)

    def add_encoded_report(self, rec: Record, blob: bytes) -> None:
        """Insert, or replace, the kept report of `rec` (`encode_report`'s bytes), in a transaction of its
        own: `--record` commits the record first, while this blob is still being encoded."""
        stmt = self._upsert(reports, ("model", "config", "commit", "report_gz"))
        row = {"model": rec.model, "config": rec.config, "commit": rec.commit, "report_gz": blob}

        def write() -> None:
            with self.engine.begin() as conn:
                conn.execute(stmt, [row])
        retrying(write)

    def report(self, model: str, config: str, commit: str) -> dict[str, Any] | None:
        """The lowering report recorded with (model, config, commit), or None."""
        q = sa.select(reports.c.report_gz).where(sa.and_(reports.c.model == model, reports.c.config == config,
                                                         reports.c.commit == commit))
        with self.engine.connect() as conn:
            blob = conn.execute(q).scalar()
        if blob is None:
            return None
        try:
            return unpack_report(json.loads(gzip.decompress(blob)))
        except (OSError, EOFError, ValueError, zlib.error) as exc:     # its bytes were overwritten
            raise damaged(self.where, f"the report kept with {commit[:8]} is unreadable ({exc})") from None

    def commits_with_reports(self, model: str, config: str) -> set[str]:
        q = sa.select(reports.c.commit).where(sa.and_(reports.c.model == model, reports.c.config == config))
        with self.engine.connect() as conn:
            return {r[0] for r in conn.execute(q)}

    # --- reading -----------------------------------------------------------------------------------
    def _select(self, where: Any = None, order: Any = None) -> list[Record]:
        q = sa.select(*[records.c[k] for k in COLUMNS])
        if where is not None:
            q = q.where(where)
        q = q.order_by(*(order if order is not None else (records.c.commit_date, records.c.recorded_at)))
        with self.engine.connect() as conn:
            return [Record(**dict(row._mapping)) for row in conn.execute(q)]

    def records(self, model: str | None = None, config: str | None = None) -> list[Record]:
        conds = [c for c in ((records.c.model == model) if model else None,
                             (records.c.config == config) if config else None) if c is not None]
        return self._select(sa.and_(*conds) if conds else None)

    def get(self, model: str, config: str, commit: str) -> Record | None:
        found = self._select(sa.and_(records.c.model == model, records.c.config == config,
                                     records.c.commit == commit))
        return found[0] if found else None

    def recorded_commits(self, model: str, config: str) -> set[str]:
        q = sa.select(records.c.commit).where(sa.and_(records.c.model == model, records.c.config == config))
        with self.engine.connect() as conn:
            return {r[0] for r in conn.execute(q)}

    def models(self) -> list[tuple[str, str, int]]:
        """(model, config, records) for every series in the store."""
        q = (sa.select(records.c.model, records.c.config, sa.func.count())
             .group_by(records.c.model, records.c.config).order_by(records.c.model, records.c.config))
        with self.engine.connect() as conn:
            return [(m, c, int(n)) for m, c, n in conn.execute(q)]

    def on_branch(self, branch: str | None, config: str, *, model: str | None = None,
                  name: str | None = None) -> list[Record]:
        """The successful records of this configuration, by model path or else by name, on `branch` (None:
        on any branch); in no useful order (`trends.ordered` orders them)."""
        who = records.c.model == model if model else records.c.name == name
        conds = [records.c.config == config, who, records.c.status == "ok"]
        if branch is not None:
            conds.append(records.c.branch == branch)
        return self._select(sa.and_(*conds))

    # --- JSON lines --------------------------------------------------------------------------------
    def export_jsonl(self, out: Any, model: str | None = None) -> int:
        n = 0
        for r in self.records(model):
            out.write(json.dumps({"schema": SCHEMA_VERSION, **r.to_dict()}, sort_keys=True) + "\n")
            n += 1
        return n

    def import_jsonl(self, lines: Iterable[str], where: str = "input") -> int:
        """Every line a record (`history export`); a bad line is refused before anything is written."""
        recs = []
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                if int(d.get("schema", 1)) > SCHEMA_VERSION:
                    raise StoreTooNewError(f"{where} line {i} was written by history schema {d['schema']}; this "
                                           f"cmlens reads up to schema {SCHEMA_VERSION}.",
                                           "Import it with the newer cmlens that exported it.")
                recs.append(Record.from_dict(d))
            except (ValueError, TypeError, AttributeError) as exc:
                raise BadInputError(f"{where} line {i} is not a history record ({exc}).",
                                    "Give a file written by `cmlens history export`.") from None
        return self.add_many(recs)


# --- opening and migrating ---------------------------------------------------------------------------
@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[sa.Connection]:
    """One process migrates at a time: a lock file beside a SQLite store, an advisory lock on PostgreSQL."""
    if engine.dialect.name == "sqlite" and engine.url.database:
        import fcntl

        with open(engine.url.database + ".lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                with engine.connect() as conn:
                    yield conn
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
        return
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_lock(735035)"))
            conn.commit()
        try:
            yield conn
        finally:
            if engine.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_unlock(735035)"))
                conn.commit()


def stored_version(conn: sa.Connection) -> int | None:
    """The store's schema version (its Alembic revision as a number); None for an empty database."""
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    rev = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    try:
        return int(rev) if rev is not None else None
    except ValueError:
        return -1


def migrate(conn: sa.Connection, to: str = "head") -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, to)
    conn.commit()


def open_store(spec: str | os.PathLike[str], *, create: bool = True, upgrade_to: str = "head") -> HistoryStore:
    """Open (and create, and migrate) a store. StoreTooNewError for a newer schema; BadInputError when the
    database cannot be reached."""
    url = store_url(spec)
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///"):])
        if not path.exists() and not create:
            raise BadInputError(f"No history store at {path}.",
                                "Record into it first (`cmlens history backfill` or `--record`), or pass --history.")
        path.parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(url, connect_args={"timeout": 30})
        watch_for_damage(engine, str(path))        # before the pragmas: a text file fails at the first one
        _sqlite_pragmas(engine)
    else:
        try:
            engine = sa.create_engine(url, pool_pre_ping=True)
        except (sa.exc.ArgumentError, ImportError) as exc:
            raise BadInputError(f"Cannot use history store {url!r}: {exc}",
                                "Give a file path, sqlite:///PATH or postgresql://USER@HOST:PORT/DB.") from None
    try:
        with _migration_lock(engine) as conn:
            have = stored_version(conn)
            if have is not None and (have > SCHEMA_VERSION or have < 0):
                raise StoreTooNewError(
                    f"The history store {engine.url.render_as_string(hide_password=True)} has schema version "
                    f"{have}; this cmlens reads schema versions up to {SCHEMA_VERSION}.",
                    "Open it with the newer cmlens that wrote it (pip install -U cortexm-lens); it is left unchanged.")
            if have is None or have < SCHEMA_VERSION or upgrade_to != "head":
                retrying(lambda: migrate(conn, upgrade_to))
            if engine.dialect.name == "sqlite":
                check_records(conn, engine.url.database or "")
    except sa.exc.OperationalError as exc:
        engine.dispose()
        raise BadInputError(f"Cannot open the history store {engine.url.render_as_string(hide_password=True)}: "
                            f"{str(exc.orig).strip().splitlines()[0] if exc.orig else exc}",
                            "Check the path or the server address, user and database.") from None
    except (StoreTooNewError, StoreDamagedError):
        engine.dispose()
        raise
    return HistoryStore(url, engine)
