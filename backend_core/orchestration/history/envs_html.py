"""`cmlens history show MODEL --html F` when the configuration was recorded under several Python
environments (`backfill --python`): the same self-contained page as html.py, with one line per
environment in every chart (a colour each, named by its ExecuTorch version in the legend), and, first in
the change list, the figures that differ between the environments at a commit."""
from __future__ import annotations

import json
from typing import Any

from backend_core.orchestration.history.envs import EnvDifference, env_label
from backend_core.orchestration.history.html import (_CSS, _JS, H, PAD_B, PAD_T, _e, _fmt, chart_frame, commit_labels,
                                                     fallback_diffs)
from backend_core.orchestration.history.metrics import label
from backend_core.orchestration.history.query import History
from backend_core.orchestration.history.trends import metric_names, series

COLOURS = ("#3056d3", "#16a085", "#d35400", "#8e44ad", "#7f8c8d")
_ENV_CSS = """.legend{display:flex;gap:16px;padding:6px 2px;font-size:12px}.legend i{display:inline-block;width:14px;
height:4px;margin-right:5px;vertical-align:middle}.ch.env{background:#effaf6}"""


def env_chart_svg(metric: str, axis: list[str], lines: list[tuple[str, list[tuple[int, int, Any, Any]]]]) -> str:
    """One metric over the commits of `axis`, one line per environment: `lines` is (colour, points) with
    points (axis position, index in the page's records, value, record)."""
    nums = [v for _, pts in lines for _, _, v, _ in pts if isinstance(v, (int, float))]
    n = len(axis)
    out, x, y = chart_frame(metric, n, nums)
    ih = H - PAD_T - PAD_B
    for k, (colour, pts) in enumerate(lines):
        shift = (k - (len(lines) - 1) / 2) * 2.5          # equal values: the lines side by side, not hidden
        xy = [(x(a), y(v) + shift) for a, _, v, _ in pts if isinstance(v, (int, float))]
        if len(xy) > 1:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.6" points="'
                       + " ".join(f"{a:.1f},{b:.1f}" for a, b in xy) + '"/>')
        for a, flat, v, r in pts:
            if not r.ok:
                cx, cy = x(a), PAD_T + ih
                out.append(f'<g class="pt" data-i="{flat}"><title>{_e(r.short)} failed</title><path d="M{cx - 5:.1f},'
                           f'{cy - 5:.1f}l10,10M{cx + 5:.1f},{cy - 5:.1f}l-10,10" stroke="#c0392b" stroke-width="2.2"/></g>')
            elif isinstance(v, (int, float)):
                tip = _e(f"{r.short} {r.subject or ''}: {_fmt(v)}")
                out.append(f'<circle class="pt" data-i="{flat}" cx="{x(a):.1f}" cy="{y(v) + shift:.1f}" r="3.5" '
                           f'fill="{colour}"><title>{tip}</title></circle>')
    out += commit_labels(axis, x)
    out.append("</svg>")
    return "".join(out)


def env_history_html(title: str, subtitle: str, histories: list[History], differences: list[EnvDifference],
                     order: list[str]) -> str:
    """`order`: every commit of the series, oldest first (trends.ordered over all their records)."""
    labels = [env_label(h) for h in histories]
    flat = [r for h in histories for r in h.records]
    offsets = [sum(len(h.records) for h in histories[:k]) for k in range(len(histories))]
    pos = {c: i for i, c in enumerate(order)}
    items = []
    for d in differences:
        flat_i = next((offsets[k] + i for k, h in enumerate(histories) for i, r in enumerate(h.records)
                       if r.commit == d.commit), 0)
        vals = " · ".join(f"{lab.split(' (')[0]}: {_fmt(v)}" for lab, v in zip(labels, d.values))
        items.append(f"<div class='ch env' data-i='{flat_i}' data-m='{_e(d.metric)}'><span class='c'>{_e(d.commit[:8])}"
                     f"</span> <span class='s'>{_e((d.subject or '')[:56])}</span><span class='t'>{_e(label(d.metric))}"
                     f" differs between environments: {_e(vals)}</span></div>")
    if not differences:
        items.append("<div class='ch env'>No figure differs between the environments on the commits both recorded.</div>")
    n_changes = 0
    for k, h in enumerate(histories):
        for c in h.changes:
            n_changes += 1
            items.append(f"<div class='ch {c.kind}' data-i='{offsets[k] + c.index}' data-m='{_e(c.metric)}'>"
                         f"<span class='c'>{_e(c.commit[:8])}</span> <span class='s' style='color:{COLOURS[k % len(COLOURS)]}'>"
                         f"{_e(labels[k].split(' (')[0])}</span><span class='t'>{_e(c.text())}</span></div>")
    names = [m for m in metric_names(flat) if any(v is not None for v in series(flat, m))]
    charts = []
    for m in names:
        lines = []
        for k, h in enumerate(histories):
            env_vals = series(h.records, m)
            lines.append((COLOURS[k % len(COLOURS)],
                          [(pos[r.commit], offsets[k] + i, v, r) for i, (r, v) in enumerate(zip(h.records, env_vals))]))
        charts.append(f"<div class='chart' id='chart-{_e(m)}'><h3>{_e(label(m))}</h3>{env_chart_svg(m, order, lines)}</div>")
    legend = "".join(f"<span><i style='background:{COLOURS[k % len(COLOURS)]}'></i>{_e(lab)}: {len(h.records)} commit(s)"
                     f"</span>" for k, (lab, h) in enumerate(zip(labels, histories)))
    diffs = [d for h in histories for d in fallback_diffs(h.records)]
    data = {"records": [{k: getattr(r, k) for k in ("commit", "subject", "commit_date", "branch", "dirty", "status",
                                                      "error", "versions", "metrics")} for r in flat],
            "fallbacks": [((r.extra or {}).get("notes") or {}).get("fallbacks", []) for r in flat],
            "diffs": diffs, "links": {}}
    payload = json.dumps(data, default=str).replace("</", "<\\/")
    heading = (f"Between environments: {len(differences)} difference(s); changes along the commits: {n_changes}")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<style>{_CSS}{_ENV_CSS}</style></head><body><header><h1>{_e(title)}</h1><div class='sub'>{_e(subtitle)}"
            f"</div></header><main><section id='changes'><h2>{_e(heading)}</h2>{''.join(items)}</section>"
            f"<section id='right'><div class='legend'>{legend}</div><div id='detail'></div>"
            f"<div id='charts'>{''.join(charts)}</div></section></main>"
            f"<script type='application/json' id='data'>{payload}</script><script>{_JS}</script></body></html>")
