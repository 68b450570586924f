"""A standalone HTML report (no server, no network): summary, fallback table with reasons, and
each stage's graph as inline SVG from Graphviz."""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ..snapshot.model import KIND_LABELS
import resources

from .dot_export import KIND_COLORS, render_svg, snapshot_to_dot
from .json_report import snapshots_from_report

_CSS = resources.text("styles", "report.css")   # shared with nothing else, but kept with the colours


def _e(x: Any) -> str:
    return html.escape(str(x))


def render_html(report: dict[str, Any], *, with_graphs: bool = True) -> str:
    snaps = snapshots_from_report(report)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>CortexM Lens — {_e(report['model'])}</title>"
             f"<style>{_CSS}</style></head><body>"]
    status_cls = "ok" if report["status"] == "done" else "fb"
    parts.append(f"<h1>{_e(report['model'])} → {_e(report['target'])} ({_e(report['flow'])} flow)</h1>")
    parts.append(f"<p>Status: <span class='{status_cls}'>{_e(report['status'])}</span>. "
                 f"ExecuTorch {_e(report['versions'].get('executorch'))}, torch {_e(report['versions'].get('torch'))}.</p>")
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
    parts.append("<div class='legend'>" + "".join(
        f"<span style='background:{KIND_COLORS[k]}'>{_e(v)}</span>" for k, v in KIND_LABELS.items()) + "</div>")

    fbs = report.get("fallbacks", [])
    parts.append(f"<h2>Fallbacks: {len(fbs)}</h2>")
    if fbs:
        parts.append("<table><tr><th>node</th><th>op</th><th>category</th><th>reason</th><th>suggestion</th>"
                     "<th>evidence</th></tr>")
        for f in fbs:
            ev = "".join(f"<li>{_e(x)}</li>" for x in f["evidence"])
            uo = f.get("user_op") or {}
            wrote = f"<br><small>user op: {_e(uo.get('target'))} `{_e(uo.get('name'))}`</small>" if uo else ""
            parts.append(f"<tr><td class='fb'>{_e(f['node'])}</td><td>{_e(f['op'])}{wrote}</td><td>{_e(f['category'])}</td>"
                         f"<td>{_e(f['reason'])}</td><td>{_e(f['suggestion'])}</td><td><ul class='ev'>{ev}</ul></td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p class='ok'>Every compute op runs on a CMSIS-NN kernel.</p>")

    pre = report.get("preflight", [])
    parts.append(f"<h2>Pre-flight: {len(pre)} finding(s)</h2>")
    if pre:
        parts.append("<table><tr><th>certainty</th><th>node</th><th>op</th><th>rule</th><th>what happens on the "
                     "target</th><th>fix</th><th>evidence</th></tr>")
        for f in pre:
            ev = "".join(f"<li>{_e(x)}</li>" for x in f.get("evidence", []))
            src = f"<br><small>ExecuTorch {_e(f['source'])}</small>" if f.get("source") else ""
            parts.append(f"<tr><td class='fb'>{_e(f['certainty'])}</td><td>{_e(f['node'] or '(program)')}</td>"
                         f"<td>{_e(f.get('op', ''))}</td><td>{_e(f['rule'])}{src}</td><td>{_e(f['message'])}</td>"
                         f"<td>{_e(f.get('fix', ''))}</td><td><ul class='ev'>{ev}</ul></td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p class='ok'>Nothing in the final program is known to fail on the target.</p>")

    if report.get("memory") and "planned_bytes" in report["memory"]:
        from ..memory.html import memory_html

        parts.append(memory_html(report["memory"]))
    parts.append("<h2>Stages</h2><table><tr><th>#</th><th>stage</th><th>nodes</th><th>added</th><th>removed</th>"
                 "<th>rewritten</th><th>seconds</th></tr>")
    for st in report["stages"]:
        parts.append(f"<tr><td>{st['index']}</td><td>{_e(st['name'])}</td><td>{len(st['nodes'])}</td>"
                     f"<td>{len(st['added'])}</td><td>{len(st['removed'])}</td><td>{len(st['rewritten'])}</td>"
                     f"<td>{st['seconds']:.2f}</td></tr>")
    parts.append("</table>")

    if with_graphs:
        parts.append("<h2>Graphs</h2>")
        last = len(snaps) - 1
        for i, snap in enumerate(snaps):
            try:
                svg = render_svg(snapshot_to_dot(snap))
            except (RuntimeError, OSError) as e:
                svg = f"<p class='fb'>{_e(e)}</p>"
            opened = " open" if i == last else ""
            parts.append(f"<details{opened}><summary>{i}. {_e(snap.stage)} — {len(snap.nodes)} nodes</summary>"
                         f"<div class='graph'>{svg}</div></details>")
    qt = report.get("quantizer", {}).get("report_text")
    if qt:
        parts.append(f"<h2>Quantizer report</h2><pre>{_e(qt)}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_html(report: dict[str, Any], path: str, *, with_graphs: bool = True) -> str:
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_html(report, with_graphs=with_graphs), encoding="utf-8")
    return str(p)
