"""A job's result (or a report written earlier) -> a history `Record`, keyed by the commit of the model
file's repository, and into a store: `record_job_result` is what `--record` on every subcommand calls."""
from __future__ import annotations

import os
import platform
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError, CmlensError
from backend_core.common.gc_pause import collector_paused
from backend_core.common.versions import stack_versions
from backend_core.orchestration.history.config import config_of_report, config_of_request
from backend_core.orchestration.history.entry import FAILED, OK, Record
from backend_core.orchestration.history.git import HeadState, ModelInRepo, commit_info, is_dirty, locate
from backend_core.orchestration.history.metrics import lowering_seconds, metrics_of
from backend_core.orchestration.jobs.outputs import schedule_options_of


def machine() -> str:
    return f"{socket.gethostname()} ({platform.machine()}, {os.cpu_count()} cores, {platform.system()})"


def default_store(model: ModelInRepo, create: bool = True) -> Path:
    """`.cmlens/history.db` at the root of the model's repository; the folder ignores itself (a
    `.gitignore` of `*`, as pytest's cache does), so `git status` stays as it was. `create=False`
    (commands that only read): the path, nothing made."""
    folder = model.root / ".cmlens"
    if not create:
        return folder / "history.db"
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# cmlens history store: not part of the repository\n*\n")
    return folder / "history.db"


def report_of_result(result: Any) -> dict[str, Any] | None:
    """The lowering report of a JobResult with the sections a record reads (memory, run, numerics,
    evaluate); graphs from the live lowering in this process, or from a result kept with keep=graphs."""
    low = result.steps.get("lower")
    if low is None:
        return None
    report = dict(low)
    if result.lowering is not None and not (report.get("stages") and "nodes" in report["stages"][-1]):
        try:
            report = {**result.lowering.report(None, with_graphs=True),
                      **{k: low[k] for k in ("seconds", "pte_bytes", "from_cache") if k in low}}
        except Exception:  # noqa: BLE001 - a lowering that cannot report its graphs is recorded without facts
            pass
    for step in ("memory", "schedule", "run", "numerics", "evaluate"):
        if result.steps.get(step) is not None:
            report[step] = result.steps[step]
    if result.job.wants("schedule"):                      # the schedule is part of the configuration
        report["options"] = {**(report.get("options") or {}), **schedule_options_of(result.job)}
    return report


def live_snapshots(result: Any, report: dict[str, Any] | None) -> list[Any] | None:
    """The lowering's GraphSnapshots in this process, when `report`'s stages are theirs (one per stage)."""
    low = getattr(result, "lowering", None)
    snaps = getattr(low, "snapshots", None)
    if not snaps or not report or len(report.get("stages") or ()) != len(snaps):
        return None
    return list(snaps)


def kept_report(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The report a store keeps beside its record: one with graphs (a finished or a failed lowering's
    stages), so the commit's lowering opens again without lowering it; None for one without graphs."""
    if report and report.get("stages") and "nodes" in report["stages"][-1]:
        return report
    return None


def facts_of(report: dict[str, Any], snapshots: list[Any] | None = None) -> Any | None:
    """The compare's facts of a finished lowering with graphs (None otherwise). `snapshots`: the live
    lowering's, when the report was built from them in this process (not rebuilt from its nodes again)."""
    if report.get("status") != "done" or not report.get("stages") or "nodes" not in report["stages"][-1]:
        return None
    from backend_core.orchestration.compare.extract import facts_from_report

    run = report.get("run") or {}
    try:
        return facts_from_report(report, label=report.get("model", ""), kind="report", profile=run.get("profile"),
                                 numerics=report.get("numerics"), evaluate=report.get("evaluate"),
                                 snapshots=snapshots)
    except CmlensError:
        return None


def build_record(report: dict[str, Any] | None, model: ModelInRepo, *, config: str, commit: str,
                 error: dict[str, Any] | None = None, dirty: bool = False, date: str | None = None,
                 subject: str | None = None, branch: str | None = None, source: str = "lower",
                 name: str | None = None, snapshots: list[Any] | None = None) -> Record:
    """A record of a finished lowering, or of a failure (`error`: its cause) at `commit`. `snapshots`: the
    live GraphSnapshots the report was built from (live_snapshots), so its facts are not rebuilt from JSON."""
    report = report or {}
    failed = error is not None or report.get("status") not in ("done", None) or not report
    rec = Record(model=model.key, name=name or report.get("model") or Path(model.path).stem, config=config,
                 commit=commit, dirty=dirty, commit_date=date, subject=subject, branch=branch, repo=str(model.root),
                 versions={**(report.get("versions") or stack_versions()), "python": sys.version.split()[0]},
                 machine=machine(), source=source)
    rec.lowering_s = lowering_seconds(report) if report else None
    if failed:
        err = error or report.get("error") or {"message": f"the lowering ended {report.get('status', 'without a report')}"}
        rec.status = FAILED
        rec.error = {k: err.get(k) for k in ("step", "type", "message", "stage", "node", "hint") if err.get(k)}
        if rec.lowering_s is not None:
            rec.metrics = {"lowering_s": rec.lowering_s}
        return rec
    facts = facts_of(report, snapshots)
    rec.status = OK
    rec.metrics, notes = metrics_of(report, facts)
    rec.facts = _baseline_facts(facts)
    rec.extra = {"notes": notes, "from_cache": bool(report.get("from_cache")), "wall_s": report.get("seconds")}
    return rec


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _baseline_facts(facts: Any) -> dict[str, Any] | None:
    """What `cmlens gate` compares (a baseline's `side`): per-op status, reasons, qparams, totals."""
    if facts is None:
        return None
    from backend_core.orchestration.compare.baseline import baseline_dict

    return baseline_dict(facts)["side"]


def record_of_result(result: Any, model: ModelInRepo, *, source: str = "lower", branch: str | None = None,
                     info: Any = None, config: str | None = None, report: dict[str, Any] | None = None,
                     head: HeadState | None = None) -> Record:
    """A JobResult -> Record at the commit `info` (a git.CommitInfo; default: the repository's HEAD,
    with its dirty flag: the work tree that was lowered may differ from the commit). `head`: HEAD's state
    already being read (git.HeadState, started before the report was built)."""
    report = report if report is not None else report_of_result(result)
    dirty = False
    if info is None:
        info, dirty = (head or HeadState(model.root)).result()
    board = result.job.board
    config = config or (config_of_report(report, board) if report and report.get("target") else
                        config_of_request(result.job.lower, board, schedule=schedule_options_of(result.job)))
    error = None
    if result.status != "done":
        error = result.error or {"message": result.status}
    rec = build_record(report, model, config=config, commit=info.commit, error=error, dirty=dirty,
                       date=info.date, subject=info.subject, branch=branch or info.branch, source=source,
                       snapshots=live_snapshots(result, report))
    target = target_provenance(getattr(result, "run_environment", None))
    if target:
        rec.extra = {**(rec.extra or {}), "target": target}
        rec.versions.update({k: v for k, v in (("executorch-checkout", target["executorch_checkout"]["commit"]),
                                               ("cmsis-nn", target["cmsis_nn"]["commit"])) if v})
    return rec


def target_provenance(env: Any) -> dict[str, Any] | None:
    """A target run's ExecuTorch checkout (root, version, commit) and CMSIS-NN (its tree's commit, or the
    tag CMake fetches): a change of either is drawn as a version marker."""
    if env is None or getattr(env, "checkout", None) is None:
        return None
    co, cm = env.checkout, getattr(env, "cmsis", None)
    path = getattr(cm, "path", None)
    commit = None
    if path is not None and (Path(path) / ".git").exists():
        from backend_core.orchestration.history.git import git

        commit = git(Path(path), "rev-parse", "HEAD", check=False).strip() or None
    return {"executorch_checkout": {"root": str(co.root), "version": co.version, "commit": co.commit},
            "cmsis_nn": {"path": str(path) if path else None, "commit": commit or getattr(cm, "fetch_tag", None),
                         "source": getattr(cm, "source", None)}}


@dataclass
class _Started:
    head: HeadState | None
    url: str
    store: Any


_STARTED: dict[Path, _Started] = {}


def start_record(model_source: str, store_url: str | None = None) -> ModelInRepo:
    """Before the job: BadInputError (exit 2) when the model is no file in a git repository or the store
    cannot be opened (a newer schema, a server out of reach); HEAD's commit, branch and dirty flag are
    read while the job runs (the tree as it was lowered) and the store stays open, so
    `record_job_result` waits for neither after it."""
    from backend_core.orchestration.history.git import split_source
    from backend_core.orchestration.history.store import open_store

    folder = Path(split_source(model_source)[0]).expanduser().resolve().parent
    head = HeadState(folder) if folder.is_dir() else None     # runs beside locate's own git call
    try:
        model = locate(model_source)
        url = str(store_url or default_store(model))
        store = open_store(url)
    except BaseException:
        if head is not None:
            head.result_or_none()
        raise
    old = _STARTED.pop(model.root, None)
    if old is not None:
        old.store.close()
    _STARTED[model.root] = _Started(head, url, store)
    return model


def record_job_result(result: Any, model_source: str, store_url: str | None = None, *,
                      source: str = "lower") -> Record:
    """`--record`: add a job's result to the history store (default `.cmlens/history.db` in the model's
    repository), keyed by the repository's current commit (as read when `start_record` was called, if
    it was). BadInputError when the model is not a file in a git repository."""
    # the collector off while a record is built: it makes some 10^5 short-lived dicts right after a lowering
    # left millions of objects young, and a full collection on the way would walk them all (100-300 ms)
    with collector_paused():
        return _record_job_result(result, model_source, store_url, source=source)


def _record_job_result(result: Any, model_source: str, store_url: str | None, *, source: str) -> Record:
    from backend_core.orchestration.history.store import open_store

    model = locate(model_source)
    started = _STARTED.pop(model.root, None)
    head = (started.head if started else None) or HeadState(model.root)   # git reads HEAD while the report is built
    report = report_of_result(result)
    rec = record_of_result(result, model, source=source, report=report, head=head)
    kept = kept_report(report)
    url = str(store_url or default_store(model))
    store = started.store if started is not None and started.url == url else None
    if started is not None and store is None:
        started.store.close()
    with store or open_store(url) as s:
        if kept is None:
            s.add(rec)
        else:
            s.add_overlapped(rec, kept)
    return rec


def record_report(report: dict[str, Any], model_source: str | None, store_url: str | None = None, *,
                  commit: str | None = None) -> Record:
    """`cmlens history add REPORT.json`: a `cmlens lower --json` report, or a job result's JSON
    (`--json F`, a sweep's result), recorded at `commit` (default HEAD) of the model's repository."""
    from backend_core.orchestration.history.store import open_store

    if "steps" in report and "job" in report:              # a JobResult's JSON
        low = dict(report["steps"].get("lower") or {})
        for step in ("memory", "run", "numerics", "evaluate"):
            if report["steps"].get(step) is not None:
                low[step] = report["steps"][step]
        error = report.get("error") if report.get("status") != "done" else None
        model_source = model_source or report["job"].get("model")
        board = report["job"].get("board")
        report = low
    elif "stages" in report or "status" in report:
        error, board = None, None
        model_source = model_source or report.get("source")
    else:
        raise BadInputError("The file is neither a `cmlens lower --json` report nor a job result.",
                            "Give the JSON `cmlens lower MODEL --json F` wrote.")
    if not model_source:
        raise BadInputError("The report does not name its model file.", "Pass --model PATH/TO/model.py.")
    model = locate(model_source)
    info = commit_info(model.root, commit or "HEAD")
    rec = build_record(report, model, config=config_of_report(report, board), commit=info.commit, error=error,
                       dirty=is_dirty(model.root) if commit is None else False, date=info.date,
                       subject=info.subject, branch=info.branch, source="add")
    with open_store(store_url or default_store(model)) as store:
        store.add(rec, kept_report(report))
    return rec
