"""The static part of the HTML report, for people who only read: what was lowered, the fallbacks with
their reasons, pre-flight findings, memory, the stages. Plain HTML tables, no script; the interactive
viewer (report/interactive) sits under the first part of it."""
from __future__ import annotations

import html
from typing import Any

import resources

from backend_core.stages.fallback.changed import keep_going_summary
from backend_core.common.snapshot.model import KIND_LABELS
from backend_core.analyses.report.dot_export import KIND_COLORS

CSS = resources.text("styles", "report.css")


def _e(x: Any) -> str:
    return html.escape(str(x))


def title_of(report: dict[str, Any]) -> str:
    return f"CortexM Lens — {report['model']}"


def head_html(report: dict[str, Any]) -> str:
    """Title, status, versions, options, the error of a failed stage, the kind legend."""
    parts = []
    status = report.get("status") or "failed"
    status_cls = "ok" if status == "done" else "fb"
    if "target" not in report:              # the job failed before its lowering (jobs/outputs.report_of)
        err = report.get("error") or {}
        return (f"<h1>{_e(report['model'])}: not lowered</h1><p>Status: <span class='fb'>{_e(status)}</span>.</p>"
                f"<p class='fb'>{_e(err.get('message') or 'no lowering')}</p>"
                + (f"<p>{_e(err['hint'])}</p>" if err.get("hint") else ""))
    versions = report.get("versions") or {}
    parts.append(f"<h1>{_e(report['model'])} → {_e(report['target'])} ({_e(report.get('flow'))} flow)</h1>")
    parts.append(f"<p>Status: <span class='{status_cls}'>{_e(status)}</span>. "
                 f"ExecuTorch {_e(versions.get('executorch'))}, torch {_e(versions.get('torch'))}.</p>")
    opts = report.get("options") or {}
    layout = ("channels_last: on — the model's 4-D weights and inputs were converted to channels_last "
              "(--channels-last)" if opts.get("channels_last") else
              "channels_last: off — the model and inputs were lowered as given")
    verify = "; suggestions verified by re-lowering" if opts.get("verify_suggestions") else ""
    parts.append(f"<p>Options: {_e(layout)}{_e(verify)}.</p>")
    if report.get("error"):
        err = report["error"]
        parts.append(f"<p class='fb'>Stage '{_e(err.get('stage'))}' failed"
                     f"{' on node ' + _e(err['node']) if err.get('node') else ''}: {_e(err.get('message'))}</p>")
        if err.get("failure"):      # the op the user wrote, its operands, ExecuTorch's check, the cause
            from backend_core.stages.fallback.pass_failure import failure_lines

            parts.append("<pre class='failure'>" + _e("\n".join(failure_lines(err["failure"]))) + "</pre>")
    run = report.get("run") if isinstance(report.get("run"), dict) else {}
    if run:                                 # the job's run step: its outcome and the cycle estimate on top
        from backend_core.analyses.report.profile_html import run_headline_html

        parts.append(run_headline_html(run))
    changed = keep_going_summary(report.get("quantizer")) if opts.get("keep_going") else ""
    if changed:
        parts.append(f"<p class='fb'>{_e(changed)}</p>")
    parts.append("<div class='legend'>" + "".join(
        f"<span style='background:{KIND_COLORS[k]}'>{_e(v)}</span>" for k, v in KIND_LABELS.items()) + "</div>")
    return "\n".join(parts)


def _cols(*percent: int) -> str:
    """Column widths of a table that fits the page (table.fit: fixed layout, long paths wrap anywhere):
    at 1366 px an evidence column of source paths once ran off the right edge and the page scrolled sideways."""
    return "<colgroup>" + "".join(f"<col style='width:{p}%'>" for p in percent) + "</colgroup>"


def _evidence(items: list[Any]) -> str:
    """The evidence folded to one line ("6 facts"; the inspector shows it too): unfolded, six facts with
    paths made each row a screen tall and pushed the graph viewer off the first screen."""
    if not items:
        return ""
    lis = "".join(f"<li>{_e(x)}</li>" for x in items)
    return (f"<details class='ev'><summary>{len(items)} fact{'s' if len(items) != 1 else ''}</summary>"
            f"<ul class='ev'>{lis}</ul></details>")


def fallbacks_html(report: dict[str, Any]) -> str:
    fbs = report.get("fallbacks") or []
    parts = [f"<h2>Fallbacks: {len(fbs)}</h2>"]
    if fbs:
        parts.append("<div class='tscroll'><table class='fit'>" + _cols(14, 17, 9, 26, 18, 16) +
                     "<tr><th>node</th><th>op</th><th>category</th><th>reason</th><th>suggestion</th>"
                     "<th>evidence</th></tr>")
        for f in fbs:
            ev = _evidence(f["evidence"])
            uo = f.get("user_op") or {}
            wrote = f"<br><small>user op: {_e(uo.get('target'))} `{_e(uo.get('name'))}`</small>" if uo else ""
            src = f"<br><small>{_e(f['source'])}</small>" if f.get("source") else ""
            parts.append(f"<tr><td class='fb'>{_e(f['node'])}</td><td>{_e(f['op'])}{wrote}{src}</td><td>{_e(f['category'])}</td>"
                         f"<td>{_e(f['reason'])}</td><td>{_e(f['suggestion'])}</td><td>{ev}</td></tr>")
        parts.append("</table></div>")
    else:
        parts.append("<p class='ok'>Every compute op runs on a CMSIS-NN kernel.</p>")
    return "\n".join(parts)


def details_html(report: dict[str, Any]) -> str:
    """Pre-flight findings, the memory section, accuracy, the run's profile with its cycle estimate, the stage
    table, the quantizer's report."""
    parts = []
    pre = report.get("preflight") or []
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for f in pre:                       # one row per rule and op: 38 portable batch norms are one finding
        groups.setdefault((f["certainty"], f["rule"], f.get("op", "")), []).append(f)
    parts.append(f"<h2>Pre-flight: {len(pre)} finding(s) of {len(groups)} kind(s)</h2>")
    if pre:
        parts.append("<table class='fit'>" + _cols(8, 13, 12, 14, 22, 17, 14) +
                     "<tr><th>certainty</th><th>nodes</th><th>op</th><th>rule</th><th>what happens on the "
                     "target</th><th>fix</th><th>evidence (first node)</th></tr>")
        for fs in groups.values():
            f = fs[0]
            ev = _evidence(f.get("evidence", []))
            src = f"<br><small>ExecuTorch {_e(f['source'])}</small>" if f.get("source") else ""
            nodes = ", ".join(_e(x["node"] or "(program)") for x in fs[:3]) + (", …" if len(fs) > 3 else "")
            count = f"<b>×{len(fs)}</b> " if len(fs) > 1 else ""
            parts.append(f"<tr><td class='fb'>{_e(f['certainty'])}</td><td>{count}{nodes}</td>"
                         f"<td>{_e(f.get('op', ''))}</td><td>{_e(f['rule'])}{src}</td><td>{_e(f['message'])}</td>"
                         f"<td>{_e(f.get('fix', ''))}</td><td>{ev}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p class='ok'>Nothing in the final program is known to fail on the target.</p>")

    if report.get("memory") and "planned_bytes" in report["memory"]:
        from backend_core.target.memory.html import memory_html

        parts.append(memory_html(report["memory"]))
    if report.get("evaluate"):                 # the job's evaluate step (backend_core.analyses.accuracy)
        from backend_core.analyses.report.accuracy_html import accuracy_html

        parts.append(accuracy_html(report["evaluate"]))
    run: dict[str, Any] = report["run"] if isinstance(report.get("run"), dict) else {}
    if run.get("profile") or run.get("profile_problem") or report.get("profile"):   # a run with --profile
        from backend_core.analyses.report.profile_html import profile_html

        parts.append(profile_html(run.get("profile") or report.get("profile") or {}, run.get("profile_problem", "")))
    parts.append("<h2>Stages</h2><table><tr><th>#</th><th>stage</th><th>nodes</th><th>added</th><th>removed</th>"
                 "<th>rewritten</th><th>seconds</th></tr>")
    for st in report["stages"]:
        n = len(st["nodes"]) if "nodes" in st else st.get("node_count", 0)
        parts.append(f"<tr><td>{st['index']}</td><td>{_e(st['name'])}</td><td>{n}</td>"
                     f"<td>{len(st['added'])}</td><td>{len(st['removed'])}</td><td>{len(st['rewritten'])}</td>"
                     f"<td>{st['seconds']:.2f}</td></tr>")
    parts.append("</table>")
    qt = report.get("quantizer", {}).get("report_text")
    if qt:
        parts.append(f"<details><summary>Quantizer report</summary><pre>{_e(qt)}</pre></details>")
    return "\n".join(parts)


def static_page(report: dict[str, Any]) -> str:
    """The summary alone: no graphs, no script (`render_html(..., with_graphs=False)`)."""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title_of(report))}</title>"
            f"<style>{CSS}</style></head><body>\n{head_html(report)}\n{fallbacks_html(report)}\n"
            f"{details_html(report)}\n</body></html>")
