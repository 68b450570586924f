"""`cmlens history backfill`: lower a model at each commit of a range and record it.

Each commit is checked out into a temporary `git worktree` under the system temp folder (never the
user's work tree or index), lowered by a Job on any executor (this process, the local pool, Dask), and
recorded as soon as it finishes, so a killed backfill resumes where it stopped: a commit already
recorded for this model and configuration is skipped."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from backend_core.orchestration.history.config import config_of_request
from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.git import (ModelInRepo, add_worktree, commit_info, current_branch, has_path,
                                                    remove_worktree)
from backend_core.orchestration.history.record import build_record, kept_report, record_of_result, report_of_result
from backend_core.orchestration.history.store import HistoryStore

ProgressCallback = Callable[["Progress"], None]


@dataclass
class Progress:
    done: int
    total: int
    record: Record
    elapsed_s: float
    eta_s: float | None


@dataclass
class BackfillResult:
    recorded: list[Record] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)        # commits already in the store
    seconds: float = 0.0


def job_at(template: Any, model: ModelInRepo, tree: Path) -> Any:
    """The template job (options, steps, board) on the model file inside a worktree, keeping the graphs
    a record's facts are made from (they cross the process boundary in the result's JSON)."""
    keep = tuple(dict.fromkeys((*template.keep, "graphs")))
    return replace(template, model=model.source_in(tree), keep=keep, outputs=None, out_dir=None,
                   label=f"{model.key}@{tree.name}")


def backfill(model: ModelInRepo, commits: list[str], template: Any, store: HistoryStore, executor: Any, *,
             chunk: int | None = None, on_progress: ProgressCallback | None = None,
             branch: str | None = None, force: bool = False, env: str | None = None) -> BackfillResult:
    """Lower and record every commit not yet recorded. `template`: a jobs.Job whose model is replaced by
    the worktree's copy; `executor`: an execute.Executor (its `workers` size the batches); `env`: the label
    of another Python environment the executor runs jobs in (`--python`): a series of its own."""
    t0 = time.monotonic()
    config = config_of_request(template.lower, template.board, env)
    have = set() if force else store.recorded_commits(model.key, config)
    todo = [c for c in commits if c not in have]
    out = BackfillResult(skipped=[c for c in commits if c in have])
    branch = branch or current_branch(model.root)
    size = chunk or (1 if getattr(executor, "workers", 1) <= 1 and executor.describe() == "this process"
                     else max(8, 4 * getattr(executor, "workers", 1)))
    lowered_s: list[float] = []

    def finish(rec: Record, report: dict[str, Any] | None = None) -> None:
        store.add(rec, report)
        out.recorded.append(rec)
        if on_progress:
            elapsed = time.monotonic() - t0
            left = len(todo) - len(out.recorded)
            per = elapsed / len(out.recorded)
            on_progress(Progress(len(out.recorded), len(todo), rec, elapsed, per * left if left else 0.0))

    for start in range(0, len(todo), size):
        part = todo[start:start + size]
        trees: dict[str, Path] = {}
        jobs, infos = [], {}
        try:
            for c in part:
                infos[c] = commit_info(model.root, c)
                if not has_path(model.root, c, model.path):
                    finish(build_record(None, model, config=config, commit=c, source="backfill",
                                        error={"type": "ModelMissing", "message": f"{model.path} is not in this commit"},
                                        date=infos[c].date, subject=infos[c].subject, branch=branch))
                    continue
                trees[c] = add_worktree(model.root, c)
                jobs.append((c, job_at(template, model, trees[c])))
            if not jobs:
                continue
            from backend_core.orchestration.execute import as_completed

            if size == 1:
                handles = [executor.submit(jobs[0][1])]
            else:
                handles = executor.map([j for _, j in jobs])
            commit_of = {id(h): c for h, (c, _) in zip(handles, jobs)}
            for h in as_completed(handles):
                c = commit_of[id(h)]
                res = h.result()
                report = report_of_result(res)
                rec = record_of_result(res, model, source="backfill", branch=branch, info=infos[c], config=config,
                                       report=report)
                _untemp(rec, trees[c])
                report = _untemp_report(kept_report(report), trees[c])
                if rec.lowering_s:
                    lowered_s.append(rec.lowering_s)
                remove_worktree(model.root, trees.pop(c))
                finish(rec, report)
        finally:
            for tree in trees.values():
                remove_worktree(model.root, tree)
    out.seconds = time.monotonic() - t0
    return out


def _untemp(rec: Record, tree: Path) -> None:
    """A failure's cause and the ops' source lines name the file as the user knows it (model.py:15), not
    the temporary worktree it was lowered from."""
    import json

    prefix = json.dumps(f"{tree}/")[1:-1]
    for attr in ("error", "facts", "extra"):
        value = getattr(rec, attr)
        if value:
            setattr(rec, attr, json.loads(json.dumps(value).replace(prefix, "")))


def _untemp_report(report: dict[str, Any] | None, tree: Path) -> dict[str, Any] | None:
    """The kept report names the model's files as in the repository, not in the temporary worktree."""
    if report is None:
        return None
    import json

    return json.loads(json.dumps(report, default=str).replace(json.dumps(f"{tree}/")[1:-1], ""))
