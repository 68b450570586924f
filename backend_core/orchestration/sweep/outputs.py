"""What a sweep leaves besides its results: a report per job (the lowering's HTML), a baseline per job
(for `cmlens gate`), `baseline.json` (every cell's baseline in one file) and `dashboard.html`."""
from __future__ import annotations

import json
from typing import Any

from backend_core.common.errors import CmlensError
from backend_core.orchestration.jobs import Job
from backend_core.orchestration.sweep.dashboard import dashboard_html, rows_of
from backend_core.orchestration.sweep.store import SweepStore

BASELINE_SET_FORMAT = "cmlens-baseline-set"


def write_outputs(store: SweepStore, ids: list[tuple[str, Job]], results: dict[str, dict[str, Any]]) -> None:
    baselines: dict[str, Any] = {}
    for jid, _job in ids:
        res = results.get(jid)
        if res is None:
            continue
        _report(store, jid, res)
        base = _baseline(store, jid, res)
        if base is not None:
            baselines[jid] = {"label": res.get("job", {}).get("label", jid), "baseline": base}
    (store.root / "baseline.json").write_text(json.dumps(
        {"format": BASELINE_SET_FORMAT, "version": 1, "cells": baselines}, indent=1, default=str))
    rows = rows_of(ids, results)
    (store.root / "dashboard.html").write_text(dashboard_html(rows, store.manifest() if
                                                              (store.root / "sweep.json").is_file() else {}))


def _report(store: SweepStore, jid: str, res: dict[str, Any]) -> None:
    low = (res.get("steps") or {}).get("lower")
    path = store.root / "reports" / f"{jid}.html"
    if not low or (path.is_file() and path.stat().st_mtime >= store.result_path(jid).stat().st_mtime):
        return
    from backend_core.analyses.report.html_report import write_html

    report = dict(low)
    if (res.get("steps") or {}).get("memory"):
        report["memory"] = res["steps"]["memory"]
    try:
        write_html(report, str(path))
    except Exception as exc:  # noqa: BLE001  a report that cannot be drawn must not lose the sweep
        path.write_text(f"<!doctype html><meta charset=utf-8><title>report</title>"
                        f"<p>The report of this job could not be written: {type(exc).__name__}: {exc}</p>")


def _baseline(store: SweepStore, jid: str, res: dict[str, Any]) -> dict[str, Any] | None:
    steps = res.get("steps") or {}
    low = steps.get("lower")
    if not low or low.get("status") != "done":
        return None
    from backend_core.orchestration.compare.baseline import baseline_dict
    from backend_core.orchestration.compare.extract import facts_from_report

    report = dict(low)
    if steps.get("memory"):
        report["memory"] = steps["memory"]
    profile = (steps.get("run") or {}).get("profile")
    try:
        facts = facts_from_report(report, label=res.get("job", {}).get("label") or jid, kind="lowering",
                                  profile=profile, numerics=steps.get("numerics"), evaluate=steps.get("evaluate"))
    except CmlensError:
        return None                           # no graphs kept (keep without "graphs"): nothing to gate on
    base = baseline_dict(facts)
    (store.root / "baselines" / f"{jid}.json").write_text(json.dumps(base, indent=1, default=str))
    return base
