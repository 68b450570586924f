"""`cmlens history show --html F --reports`: beside the trends page, each commit's recorded lowering as
the product's own HTML report, and each changed commit against the commit before it as the compare
page (fallbacks named on the user's op, memory, qparams) — made from the reports the store keeps, never
by lowering again. Returns the links the trends page opens on a click."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.store import HistoryStore
from backend_core.orchestration.history.trends import METRIC, Change


def write_pages(store: HistoryStore, records: list[Record], changes: list[Change], folder: Path,
                on_page: Callable[[str], None] | None = None) -> dict[str, dict[int, str]]:
    """{"points": {index: relative path}, "changes": {index: relative path}} of the pages written."""
    from backend_core.orchestration.compare.result import compare_to_dict
    from backend_core.analyses.report.html_report import write_html
    from backend_core.analyses.report.interactive import compare_html, write_text

    folder.mkdir(parents=True, exist_ok=True)
    have = store.commits_with_reports(records[0].model, records[0].config) if records else set()
    reports: dict[str, dict[str, Any]] = {}

    def report(r: Record) -> dict[str, Any] | None:
        if r.commit in have and r.commit not in reports:
            reports[r.commit] = store.report(r.model, r.config, r.commit) or {}
        return reports.get(r.commit) or None

    points: dict[int, str] = {}
    for i, r in enumerate(records):
        rep = report(r)
        if rep:
            name = f"{r.commit[:12]}.html"
            write_html(rep, str(folder / name))
            points[i] = f"{folder.name}/{name}"
            if on_page:
                on_page(name)
    changed: dict[int, str] = {}
    for i in sorted({c.index for c in changes if c.kind == METRIC}):
        a, b = _parent(records, i), records[i]
        cmp = change_comparison(records, i, report)
        if a is None or cmp is None:
            continue
        name = f"{b.commit[:12]}-vs-{a.commit[:12]}.html"
        write_text(folder / name, compare_html(compare_to_dict(cmp), cmp.reports))
        changed[i] = f"{folder.name}/{name}"
        if on_page:
            on_page(name)
    return {"points": points, "changes": changed}


def change_comparison(records: list[Record], i: int,
                      report: Callable[[Record], dict[str, Any] | None]) -> Any:
    """The compare of commit `i` against the last commit before it that lowered (their recorded facts, and
    the reports `report` gives for the graphs), or None when there is nothing to compare it with. The trends
    page's change links and the window's History tab both show this."""
    from backend_core.orchestration.compare.facts import SideFacts
    from backend_core.orchestration.compare.result import compare_facts

    a, b = _parent(records, i), records[i]
    if a is None or not (a.facts and b.facts):
        return None
    sa, sb = SideFacts.from_dict(a.facts), SideFacts.from_dict(b.facts)
    sa.label, sb.label = f"{a.short} {(a.subject or '')[:40]}", f"{b.short} {(b.subject or '')[:40]}"
    return compare_facts([sa, sb], reports=[report(a), report(b)])


def _parent(records: list[Record], i: int) -> Record | None:
    """The last commit before `i` that lowered (what its changes were measured against)."""
    return next((records[j] for j in range(i - 1, -1, -1) if records[j].ok), None)
