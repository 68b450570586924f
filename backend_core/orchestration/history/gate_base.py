"""`cmlens gate --history STORE [--branch NAME]`: the baseline is the last record (in the git graph's
order) of the same model and configuration on that branch, so a pull request is gated against main's
history with no baseline file to keep. Without --branch, the repository's default branch (origin's
HEAD, else main / master), or the one branch the records are on. The record's facts are a baseline's
`side` (compare.baseline), so the gate's checks and thresholds are the same as with `--baseline`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.orchestration.history.config import config_key
from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.git import ModelInRepo
from backend_core.orchestration.history.store import HistoryStore
from backend_core.orchestration.history.trends import ordered


def model_of(result_text: str) -> ModelInRepo | None:
    """The model file (in its git repository) of a gate's RESULT: the file itself, or the file a
    `cmlens lower --json` report names (relative to the report or the current folder); None otherwise."""
    import json

    from backend_core.orchestration.history.git import locate, split_source

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
        return locate(source)
    except BadInputError:
        return None


def model_key_of(result_text: str) -> str | None:
    """The store's model key of a gate's RESULT (model_of), or None."""
    model = model_of(result_text)
    return model.key if model is not None else None


def _records(store: HistoryStore, branch: str | None, config: str, model_key: str | None,
             name: str) -> list[Record]:
    """By the model's path in its repository, else (a report of another checkout) by the model's name."""
    found = store.on_branch(branch, config, model=model_key) if model_key else []
    return found or store.on_branch(branch, config, name=name)


def pick_branch(asked: str | None, found: list[str], model: ModelInRepo | None) -> tuple[str | None, str]:
    """(the branch to take the baseline from or None, why none: for the message). `found`: the branches
    with records. Asked: that one. Else the repository's default branch, when it has records; else the one
    branch with records (other than the one checked out, which a pull request is on)."""
    if asked is not None:
        return (asked, "") if asked in found else (None, f"on branch {asked}")
    from backend_core.orchestration.history.git import current_branch, default_branch

    default = default_branch(model.root) if model is not None else None
    if default in found:
        return default, ""
    here = current_branch(model.root) if model is not None else None
    others = [b for b in found if b != here]
    if len(others) == 1 or len(found) == 1:
        return (others or found)[0], ""
    told = f"the repository's default branch, {default}" if default else "the repository's default branch (not found)"
    return None, f"on {told}"


def baseline_from_history(store: HistoryStore, facts: Any, branch: str | None,
                          model: ModelInRepo | None = None) -> tuple[Any, Record]:
    """(SideFacts of the last record on the branch, that record). BadInputError (exit 2) when there is none,
    naming the branches that have records, or when it holds no per-op facts."""
    from backend_core.orchestration.compare.facts import SideFacts

    config = config_key(facts.target, facts.flow, facts.options)
    key = model.key if model is not None else None
    every = _records(store, None, config, key, facts.model)
    found = sorted({r.branch for r in every if r.branch})
    branch, why = pick_branch(branch, found, model)
    recs = ordered([r for r in every if r.branch == branch], model.root if model is not None else None) \
        if branch is not None else []
    if not recs:
        have = (f"It has records of it on: {', '.join(found)}." if found else
                "It has no successful record of it on any branch.")
        raise BadInputError(f"The history store {store.where} has no record of {key or facts.model} [{config}] {why}. "
                            + have,
                            (f"Pass --branch {found[0]}" + (" (or another of those)" if len(found) > 1 else "")
                             + ", or record that branch's commits" if found else "Record the base branch's commits")
                            + " (in CI on it: `cmlens lower MODEL --record --history STORE`, or `cmlens history "
                            "backfill MODEL --last N`) with the same options.")
    rec = recs[-1]
    if not rec.facts:
        raise BadInputError(f"The last record on {branch} ({rec.short}) holds no per-op facts (it was recorded from "
                            "a result without graphs, e.g. a sweep's).",
                            "Record it with `--record` on lower/evaluate/run or with `cmlens history backfill`.")
    base = SideFacts.from_dict(rec.facts)
    base.label = f"{branch}@{rec.short} ({(rec.subject or '')[:40]})"
    return base, rec
