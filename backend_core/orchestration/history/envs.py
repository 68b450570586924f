"""One configuration recorded under several Python environments (`history backfill --python PATH`: a
second venv with another ExecuTorch), shown side by side: one series per environment, each named by the
ExecuTorch version its records were lowered with, and the figures that differ between them per commit.

The environment is the ` env=executorch-VERSION` part of a configuration key (config.config_key); the
series without it ran in cmlens's own environment."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.orchestration.history.metrics import value
from backend_core.orchestration.history.query import History, configs_of, load_history
from backend_core.orchestration.history.store import HistoryStore
from backend_core.orchestration.history.trends import metric_names, ordered

ENV_PART = " env="


def split_env(config: str) -> tuple[str, str | None]:
    """"cortex-m55 legacy int8 env=executorch-1.5.0" -> ("cortex-m55 legacy int8", "executorch-1.5.0")."""
    base, sep, env = config.partition(ENV_PART)
    return (base, env) if sep else (config, None)


def env_label(history: History) -> str:
    """"executorch 1.5.0 (--python env=executorch-1.5.0)" / "executorch 1.5.1 (this environment)": the
    ExecuTorch version most of the series' records were lowered with, and where they ran."""
    versions = Counter((r.versions or {}).get("executorch", "?") for r in history.records)
    ver = versions.most_common(1)[0][0] if versions else "?"
    _, env = split_env(history.config)
    return f"executorch {ver} ({'--python env=' + env if env else 'this environment'})"


def env_configs(store: HistoryStore, model: str, config: str | None = None) -> list[str] | None:
    """The configurations of one base configuration under each environment, this environment's first;
    None when the model has a single series, or when its configurations differ in more than the
    environment and `config` does not say which (load_history's question then)."""
    configs = configs_of(store, model)
    bases = {split_env(c)[0] for c in configs}
    base = split_env(config)[0] if config else (bases.pop() if len(bases) == 1 else None)
    if base is None:
        return None
    same = sorted((c for c in configs if split_env(c)[0] == base), key=lambda c: (split_env(c)[1] is not None, c))
    if len(same) < 2:
        return None
    return same


def load_env_histories(store: HistoryStore, model: str, *, config: str | None = None,
                       root: str | Path | None = None, time_threshold: float | None = None) -> list[History]:
    """Every environment's series of the configuration (BadInputError when there are not two)."""
    same = env_configs(store, model, config)
    if not same:
        raise BadInputError(f"{model} is not recorded under two Python environments"
                            f"{' in ' + repr(config) if config else ''}.",
                            "Record it again with `cmlens history backfill MODEL --python OTHER_VENV/bin/python`.")
    return [load_history(store, model, config=c, root=root, time_threshold=time_threshold) for c in same]


@dataclass
class EnvDifference:
    commit: str
    subject: str | None
    metric: str
    values: list[Any]            # one per environment, in the histories' order (None: not recorded there)


def env_differences(histories: list[History], metrics: list[str] | None = None,
                    root: str | Path | None = None) -> list[EnvDifference]:
    """Per commit recorded in more than one environment, in commit order: each figure whose value differs
    between them (a failure in one and not the other is the `status` figure; lowering time, noisy, is not
    compared)."""
    by_commit = [{r.commit: r for r in h.records} for h in histories]
    order = ordered([r for h in histories for r in h.records], root)
    seen: set[str] = set()
    names = metrics or metric_names([r for h in histories for r in h.records])
    out = []
    for rec in order:
        if rec.commit in seen:
            continue
        seen.add(rec.commit)
        recs = [b.get(rec.commit) for b in by_commit]
        if sum(r is not None for r in recs) < 2:
            continue
        statuses = [r.status if r is not None else None for r in recs]
        if len({s for s in statuses if s is not None}) > 1:
            out.append(EnvDifference(rec.commit, rec.subject, "status", statuses))
            continue
        for m in names:
            vals = [value(r.metrics, m) if r is not None and r.ok else None for r in recs]
            present = [v for v in vals if v is not None]
            if m == "lowering_s" or len(present) < 2:
                continue
            if len(set(present)) > 1:
                out.append(EnvDifference(rec.commit, rec.subject, m, vals))
    return out
