"""A new record of a commit already recorded (same model and configuration) replaces the old one, but never
with fewer figures: a `--record` of a step without the memory figures, or `history add` of a JSON without
graphs, keeps the arena, RAM and per-op facts a backfill recorded there. Figures are deterministic for a
commit, so the old ones hold for the new lowering as long as the figures both have agree; when they do not
(a dirty work tree lowered at the commit), the new record is another lowering and replaces the old as it is."""
from __future__ import annotations

from dataclasses import replace

from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.metrics import NOISY


def same_lowering(old: Record, new: Record) -> bool:
    """The figures both records have (noisy ones apart) are equal."""
    shared = (set(old.metrics) & set(new.metrics)) - set(NOISY)
    return all(old.metrics[k] == new.metrics[k] for k in shared)


def fuller(old: Record | None, new: Record) -> Record:
    """`new`, with the figures, facts and notes of `old` it lacks when both lowered and agree."""
    if old is None or not (old.ok and new.ok) or not same_lowering(old, new):
        return new
    missing = {k: v for k, v in old.metrics.items() if k not in new.metrics}
    if not missing and (new.facts or not old.facts):
        return new
    notes = {**((old.extra or {}).get("notes") or {}), **((new.extra or {}).get("notes") or {})}
    extra = {**(new.extra or {}), "notes": notes} if notes else new.extra
    if missing:
        extra = {**(extra or {}), "kept_from": {"source": old.source, "recorded_at": old.recorded_at,
                                                "metrics": sorted(missing)}}
    return replace(new, metrics={**old.metrics, **new.metrics}, facts=new.facts or old.facts, extra=extra)
