"""`cmlens gate --history STORE --branch main`: the baseline is the last record of the same model and
configuration on that branch, so a pull request is gated against main's history with no baseline file
to keep. The record's facts are a baseline's `side` (compare.baseline), so the gate's checks and
thresholds are the same as with `--baseline`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import BadInputError
from .config import config_key
from .entry import Record
from .store import HistoryStore


def model_key_of(result_text: str) -> str | None:
    """The store's model key of a gate's RESULT: a model file in a git repository, or the file a
    `cmlens lower --json` report names (relative to the report or the current folder); None otherwise."""
    import json

    from .git import locate, split_source

    path, _ = split_source(result_text.split("@", 1)[0])
    source: str | None = result_text.split("@", 1)[0]
    if path.endswith(".json") and Path(path).is_file():
        try:
            source = json.loads(Path(path).read_text()).get("source")
        except (OSError, ValueError, AttributeError):
            return None
        if source and not Path(source).is_absolute() and not Path(source).exists():
            source = str(Path(path).resolve().parent / source)
    if not source:
        return None
    try:
        return locate(source).key
    except BadInputError:
        return None


def baseline_from_history(store: HistoryStore, facts: Any, branch: str,
                          model_key: str | None = None) -> tuple[Any, Record]:
    """(SideFacts of the last record on `branch`, that record). BadInputError (exit 2) when there is none
    or it holds no per-op facts."""
    from ..compare.facts import SideFacts

    config = config_key(facts.target, facts.flow, facts.options)
    rec = store.last_on_branch(branch, config, model=model_key) if model_key else None
    rec = rec or store.last_on_branch(branch, config, name=facts.model)
    if rec is None:
        raise BadInputError(f"The history store {store.where} has no record of {model_key or facts.model} "
                            f"[{config}] on branch {branch}.",
                            f"Record {branch}'s commits first (in CI on {branch}: `cmlens lower MODEL --record "
                            f"--history STORE`, or `cmlens history backfill MODEL --last N`) with the same options.")
    if not rec.facts:
        raise BadInputError(f"The last record on {branch} ({rec.short}) holds no per-op facts (it was recorded from "
                            "a result without graphs, e.g. a sweep's).",
                            "Record it with `--record` on lower/evaluate/run or with `cmlens history backfill`.")
    base = SideFacts.from_dict(rec.facts)
    base.label = f"{branch}@{rec.short} ({(rec.subject or '')[:40]})"
    return base, rec
