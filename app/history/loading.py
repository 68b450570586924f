"""What the History tab shows, read from a store (backend_core.orchestration.history) on a background thread: plain data,
no widgets. One road with `cmlens history show`: load_history, series, the changes, the recorded reports."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.errors import CmlensError
from backend_core.orchestration.history import History, HistoryStore, load_history, metric_names, open_store, series
from backend_core.orchestration.history.metrics import label
from backend_core.orchestration.history.trends import METRIC, VERSION


@dataclass
class HistoryData:
    where: str
    store: HistoryStore
    history: History
    model_key: str
    models: list[tuple[str, str]]                  # (label, model key) of every model in the store
    metrics: list[str] = field(default_factory=list)

    def label(self, metric: str) -> str:
        return label(metric)

    def points(self, metric: str) -> tuple[list[int], list[float]]:
        """(commit positions, values) where the metric was measured."""
        vals = series(self.history.records, metric)
        pts = [(i, float(v)) for i, v in enumerate(vals) if isinstance(v, (int, float))]
        return [p[0] for p in pts], [p[1] for p in pts]

    def changed_at(self, metric: str) -> set[int]:
        return {c.index for c in self.history.changes if c.kind == METRIC and c.metric == metric}

    @property
    def version_marks(self) -> list[int]:
        return sorted({c.index for c in self.history.changes if c.kind == VERSION})

    @property
    def failed(self) -> list[int]:
        return [i for i, r in enumerate(self.history.records) if not r.ok]

    def point_tip(self, index: int, metric: str) -> str:
        r = self.history.records[index]
        v = series([r], metric)[0]
        return f"{r.short} {r.subject or ''}\n{label(metric)}: {v}"

    def commit_text(self, index: int) -> str:
        """The commit's subject, date, status and what changed there (rich text for the details box)."""
        import html

        r = self.history.records[index]
        lines = [f"<b>{r.short}</b> {html.escape(r.subject or '')} <i>{html.escape(r.commit_date or '')}</i>"]
        if not r.ok:
            lines.append(f"<span style='color:#b71c1c'>failed: {html.escape(str((r.error or {}).get('message', '')))}</span>")
        lines += [html.escape(c.text()) for c in self.history.changes if c.index == index]
        return "<br>".join(lines)


def load_data(where: str, model: str | None = None) -> HistoryData:
    """Open the store (never creating one) and read one model's series: the first recorded, or `model`."""
    store = open_store(where, create=False)
    series_of = store.models()
    models = sorted({m for m, _, _ in series_of})
    if not models:
        from backend_core.common.errors import BadInputError

        raise BadInputError(f"The history store {store.where} is empty.",
                            "Record with `cmlens history backfill MODEL --last N` or `--record`.")
    key = model if model in models else models[0]
    configs = [c for m, c, _ in series_of if m == key]
    history = load_history(store, key, config=configs[0])
    metrics = [m for m in metric_names(history.records) if any(v is not None for v in series(history.records, m))]
    return HistoryData(store.where, store, history, key, [(m, m) for m in models], metrics)


def load_or_error(where: str, model: str | None = None) -> "HistoryData | CmlensError":
    """load_data, or the typed error that says why not (a damaged, empty or missing store): the view shows
    its message and fix, never a traceback."""
    try:
        return load_data(where, model)
    except CmlensError as exc:
        return exc


def without_password(where: str) -> str:
    """A store to remember: a database URL without its password (the server's own means supply it: a
    .pgpass file, PGPASSWORD); a path as it is."""
    if "://" not in where:
        return where
    from sqlalchemy.engine import make_url

    try:
        url = make_url(where)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy reads: remembered as typed, it holds no password field
        return where
    return url._replace(password=None).render_as_string(hide_password=False) if url.password else where


def recorded_report(data: HistoryData, index: int) -> dict[str, Any] | None:
    """The lowering report recorded with commit `index` (graphs included), or None."""
    r = data.history.records[index]
    rep = data.store.report(r.model, r.config, r.commit)
    return rep if rep and rep.get("stages") and all("nodes" in st for st in rep["stages"]) else None


def change_compare(data: HistoryData, index: int) -> dict[str, Any] | None:
    """The compare JSON of commit `index` against the last commit before it that lowered (None: nothing to
    compare), the one the trends page links to (backend_core.orchestration.history.pages.change_comparison)."""
    from backend_core.orchestration.compare.result import compare_to_dict
    from backend_core.orchestration.history.pages import change_comparison

    cmp = change_comparison(data.history.records, index,
                            lambda r: data.store.report(r.model, r.config, r.commit))
    return compare_to_dict(cmp, reports=True) if cmp is not None else None
