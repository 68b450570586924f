"""One series read from a store for a face to show: the records of a model in one configuration, in
commit order, with their changes (`load_history`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from backend_core.common.errors import BadInputError
from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.store import HistoryStore
from backend_core.orchestration.history.trends import Change, changes, ordered


@dataclass
class History:
    model: str
    config: str
    records: list[Record]
    changes: list[Change]
    configs: list[str] = field(default_factory=list)     # every configuration the store has for the model


def configs_of(store: HistoryStore, model: str) -> list[str]:
    return [c for m, c, _ in store.models() if m == model]


def load_history(store: HistoryStore, model: str, *, config: str | None = None, root: str | Path | None = None,
                 time_threshold: float | None = None) -> History:
    """BadInputError when the store has no record of the model, or several configurations and none chosen."""
    configs = configs_of(store, model)
    if not configs:
        known = sorted({m for m, _, _ in store.models()})
        raise BadInputError(f"The history store {store.where} has no record of {model}.",
                            ("It has: " + ", ".join(known) + "." if known else "It is empty.")
                            + " Record with `cmlens history backfill MODEL --last N` or `--record`.")
    if config is None:
        if len(configs) > 1:
            raise BadInputError(f"{model} is recorded in {len(configs)} configurations: " + "; ".join(configs) + ".",
                                "Choose one with --config \"...\" (as printed).")
        config = configs[0]
    elif config not in configs:
        raise BadInputError(f"{model} has no record in configuration {config!r}.",
                            "Recorded configurations: " + "; ".join(configs) + ".")
    recs = ordered(store.records(model, config), root)
    return History(model, config, recs, changes(recs, time_threshold=time_threshold), configs)
