"""A series of records over commits, and every change in it: which commit, which metric, by how much.

Lowering figures are deterministic (the same commit lowers to the same graph), so any difference is a
change; noisy metrics (lowering time) count only past a relative threshold (`metrics.NOISY`). A failed
commit is a point of its own (a status change), and a version change of the stack (ExecuTorch, torch,
torchao, cmlens) is a change too, drawn as a marker."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.git import graph_order
from backend_core.orchestration.history.metrics import NOISE_FLOOR, NOISY, label, sort_key, value

VERSIONED = ("executorch", "torch", "torchao", "cortexm-lens", "executorch-checkout", "cmsis-nn")
METRIC, STATUS, VERSION = "metric", "status", "version"


@dataclass
class Change:
    index: int                 # position of the commit in the series
    commit: str
    subject: str
    kind: str                  # metric | status | version
    metric: str                # the metric (or "status", or the package whose version changed)
    before: Any
    after: Any
    parent: str = ""           # the commit before it in the series

    @property
    def delta(self) -> float | None:
        if isinstance(self.before, (int, float)) and isinstance(self.after, (int, float)):
            return self.after - self.before
        return None

    def text(self) -> str:
        if self.kind == VERSION:
            return f"{self.metric} {self.before} -> {self.after}"
        if self.kind == STATUS:
            return f"lowering {self.before} -> {self.after}"
        d = self.delta
        rel = f", {d / self.before * 100:+.1f} %" if d is not None and self.before else ""
        sign = f" ({_fmt(d, signed=True)}{rel})" if d is not None else ""
        return f"{label(self.metric)}: {_fmt(self.before)} -> {_fmt(self.after)}{sign}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "delta": self.delta, "text": self.text()}


def _fmt(v: Any, signed: bool = False) -> str:
    if v is None:
        return "—"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:+,.3g}" if signed else f"{v:,.3g}"
    if isinstance(v, (int, float)):
        return f"{int(v):+,}" if signed else f"{int(v):,}"
    return str(v)


def ordered(records: list[Record], root: str | Path | None = None) -> list[Record]:
    """The one order of a series, for every face (`history show`, its HTML, the History tab, bisect's and
    gate's baselines): by the git graph of the model's repository (`root`, else the repository the
    records name), a parent before its children; the commit date only as a tie-break, and for commits
    the repository does not have (after those it has). Commit dates tie (several commits in a second)
    and lie (a rebase); the order the records were written in is no order at all (a pool's lowerings
    finish as they like)."""
    where = _repository(records, root)
    try:
        pos = graph_order(where, [r.commit for r in records]) if where is not None else {}
    except BadInputError:                     # no git on this machine: the dates are all there is
        pos = {}
    return sorted(records, key=lambda r: (0, pos[r.commit], "") if r.commit in pos
                  else (1, 0, f"{r.commit_date or ''} {r.recorded_at}"))


def _repository(records: list[Record], root: str | Path | None) -> Path | None:
    """`root` when it is a folder, else the repository most of the records were made in, when it is here."""
    if root is not None:
        return Path(root) if Path(root).is_dir() else None
    from collections import Counter

    for repo, _n in Counter(r.repo for r in records if r.repo).most_common():
        if Path(repo).is_dir():
            return Path(repo)
    return None


def metric_names(records: list[Record]) -> list[str]:
    names = {k for r in records for k in r.metrics}
    return sorted(names, key=sort_key)


def series(records: list[Record], metric: str) -> list[Any]:
    """The metric's value at each record (None: not measured there, or the commit failed)."""
    return [value(r.metrics, metric, r.ok) if r.ok else None for r in records]


def is_change(metric: str, before: Any, after: Any, threshold: float | None = None) -> bool:
    if before is None or after is None or before == after:
        return False
    rel = threshold if threshold is not None else NOISY.get(metric)
    if rel is not None and isinstance(before, (int, float)) and before:
        if abs(after - before) < NOISE_FLOOR.get(metric, 0.0):
            return False
        return abs(after - before) / abs(before) > rel
    return True


def measured_alike(a: Record, b: Record) -> bool:
    """Both lowerings ran (neither came from the cache), on the same machine, by the same way (`source`:
    a backfill's pool lowers several commits at once on shared cores, `lower --record` one alone): only
    then is a difference of their lowering time a change of the commit. A cache hit times no lowering of its
    own, and a backfill's 3.65 s against a lone lowering's 2.19 s of the same graph says nothing of it."""
    ea, eb = a.extra or {}, b.extra or {}
    return not (ea.get("from_cache") or eb.get("from_cache")) and a.machine == b.machine and a.source == b.source


def changes(records: list[Record], *, time_threshold: float | None = None) -> list[Change]:
    """Every change between consecutive records of an ordered series."""
    out: list[Change] = []
    names = metric_names(records)
    last_ok: Record | None = None              # a change across a failed commit is still a change
    for i in range(1, len(records)):
        a, b = records[i - 1], records[i]
        subj = b.subject or ""
        if a.status != b.status:
            cause = (b.error or {}).get("message", "") if not b.ok else ""
            out.append(Change(i, b.commit, subj, STATUS, "status", a.status,
                              b.status + (f": {cause}" if cause else ""), a.commit))
        for pkg in VERSIONED:
            va, vb = a.versions.get(pkg), b.versions.get(pkg)
            if va and vb and va != vb:
                out.append(Change(i, b.commit, subj, VERSION, pkg, va, vb, a.commit))
        if a.ok:
            last_ok = a
        if not b.ok or last_ok is None:
            continue
        for m in names:
            if m in NOISY and not measured_alike(last_ok, b):
                continue
            va, vb = value(last_ok.metrics, m), value(b.metrics, m)
            thr = time_threshold if m in NOISY and time_threshold is not None else None
            if is_change(m, va, vb, thr):
                out.append(Change(i, b.commit, subj, METRIC, m, va, vb, last_ok.commit))
    return out
