"""A damaged SQLite store (junk written over it, a truncated copy, a text file given as the store) is bad
input, not a crash: every query that SQLite refuses as corrupt, in any command, raises one
`StoreDamagedError` naming the file and SQLite's cause (exit 2 in the CLI, a message in the window)."""
from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from backend_core.common.errors import BadInputError

# SQLite's extended names of a file that is no database or a damaged one; a lock (SQLITE_BUSY) is not damage
_DAMAGE_NAMES = ("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_IOERR")
_DAMAGE_WORDS = ("malformed", "not a database", "disk i/o error", "file is encrypted")


class StoreDamagedError(BadInputError):
    """The store's file is not a SQLite database, or its pages are damaged (exit 2)."""


def is_damage(exc: BaseException | None) -> bool:
    """True for SQLite's "file is not a database" / "database disk image is malformed" (and I/O errors)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(_DAMAGE_NAMES) or any(w in str(exc).lower() for w in _DAMAGE_WORDS)


def damaged(path: str, cause: Any) -> StoreDamagedError:
    first = (str(cause).strip().splitlines() or ["unreadable"])[0]
    return StoreDamagedError(
        f"The history store {path} is damaged or is not a history store: {first}.",
        "Move it away (the next record starts a new store in its place) or use another store; to save what it "
        f"holds: `sqlite3 {path} .recover | sqlite3 recovered.db`, then open recovered.db.")


def check_records(conn: Any, path: str) -> None:
    """SQLite's quick check of the records table and its index (2.7 ms for 2,000 records with their reports:
    the reports' pages are read only when one is opened): damage in the middle of the file, where no query
    of this command may pass, is named when the store is opened, not left for a later command to trip on."""
    rows = [str(r[0]) for r in conn.exec_driver_sql("PRAGMA quick_check(records)").fetchall()]
    if rows and rows[0] != "ok":
        found = [ln for r in rows for ln in r.splitlines() if ln.strip() and not ln.startswith("***")]
        raise damaged(path, f"its integrity check found {(found or rows)[0]}")


def watch_for_damage(engine: Engine, path: str) -> None:
    """Every statement on `engine` (and its connections' set-up) that SQLite refuses as damaged raises
    StoreDamagedError instead of SQLAlchemy's DatabaseError."""
    @event.listens_for(engine, "handle_error")
    def _on_error(ctx: Any) -> None:
        if is_damage(ctx.original_exception):
            raise damaged(path, ctx.original_exception) from None
