"""History: every figure of a model across commits (and stack versions), and the first commit that
changed one. One record per (model, configuration, commit) in a SQLAlchemy store (SQLite file by default,
PostgreSQL for a team), with a versioned schema migrated by the Alembic scripts in `migrations/`.

What a face calls (the CLI `cmlens history`, a window's History view):
    store = open_store(url_or_path)                       # creates / migrates; StoreTooNewError if newer
    h = load_history(store, model_key, root=repo_root)    # ordered records + their changes (query.py)
    series(h.records, "fallbacks"), metric_names(h.records), h.changes
    record_job_result(result, model_source, store_url)    # --record
"""
from __future__ import annotations

from backend_core.orchestration.history.entry import FAILED, OK, Record
from backend_core.orchestration.history.query import History, load_history
from backend_core.orchestration.history.record import default_store, record_job_result, record_report
from backend_core.orchestration.history.store import HistoryStore, StoreTooNewError, open_store
from backend_core.orchestration.history.trends import Change, changes, metric_names, ordered, series

__all__ = ["Record", "OK", "FAILED", "HistoryStore", "StoreTooNewError", "open_store", "record_job_result",
           "record_report", "default_store", "History", "load_history", "Change", "changes", "metric_names",
           "ordered", "series"]
