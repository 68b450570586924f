"""`cmlens history show MODEL --html F`: one self-contained file (no server, no CDN) — a chart per metric
over the commits, drawn here as inline SVG, stack version changes as dashed markers, failed commits as
red crosses, and the "changes" list (like asv's regressions page) on the first screen. A click on a point
or a change shows that commit: subject, date, versions, every figure, its fallbacks on the user's ops,
and the fallbacks it added or removed against the commit before it."""
from __future__ import annotations

import html
import json
from typing import Any, Callable

from backend_core.orchestration.history.entry import Record
from backend_core.orchestration.history.metrics import label
from backend_core.orchestration.history.trends import METRIC, STATUS, VERSION, Change, metric_names, series

# PAD_R holds half a commit id (7 monospace characters, ~42 px): with 10 the last id, centred on the
# chart's right end, ran past the SVG's edge and was cut (`794be`, `6a3d3`)
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 420, 170, 58, 24, 22, 26

_CSS = """
body{font:13px/1.35 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{padding:10px 16px;background:#1d2430;color:#fff}header h1{font-size:17px;margin:0 0 2px}
header .sub{color:#b9c2d0;font-size:12px}
main{display:flex;gap:12px;padding:10px 12px;align-items:flex-start}
#changes{width:390px;flex:none;background:#fff;border:1px solid #dde1e7;border-radius:6px;max-height:640px;overflow:auto}
#changes h2,#charts h2{font-size:14px;margin:0;padding:8px 10px;border-bottom:1px solid #eceff3}
.ch{padding:5px 10px;border-bottom:1px solid #f0f2f5;cursor:pointer}.ch:hover{background:#eef4ff}
.ch .c{font-family:ui-monospace,monospace;color:#3056d3}.ch .s{color:#5b6575}
.ch.version{background:#f7f3ff}.ch.status{background:#fff1f1}.ch .t{display:block}
.up{color:#c0392b}.down{color:#1e8449}
#right{flex:1;min-width:0}#charts{display:flex;flex-wrap:wrap;gap:8px}
.chart{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:4px 6px}
.chart h3{font-size:12px;margin:2px 0 0 4px;font-weight:600}
svg text{font:10px system-ui,sans-serif;fill:#5b6575}
.pt{cursor:pointer}.pt:hover{r:6}
#detail{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:8px 10px;margin-bottom:8px;display:none}
#detail table{border-collapse:collapse}#detail td{padding:1px 8px 1px 0;vertical-align:top}
.mono{font-family:ui-monospace,monospace}
"""

_JS = """
const R=JSON.parse(document.getElementById('data').textContent);
function esc(s){return String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]))}
function show(i){const r=R.records[i];const d=document.getElementById('detail');let h='';
const L=R.links||{};const rp=(L.points||{})[i],cp=(L.changes||{})[i];
h+='<b class="mono">'+esc(r.commit.slice(0,10))+'</b> '+esc(r.subject||'')+' <span class="s">'+esc(r.commit_date||'')+
(r.branch?' · '+esc(r.branch):'')+(r.dirty?' · dirty':'')+'</span><br>';
if(r.status!=='ok'){h+='<b class="up">failed</b>: '+esc((r.error||{}).message||'')+'<br>'}
h+='<span class="s">'+Object.entries(r.versions||{}).map(([k,v])=>esc(k)+' '+esc(v)).join(' · ')+'</span>';
const fb=(R.fallbacks[i]||[]);\
if(fb.length){h+='<div><b>fallbacks</b>: '+\
fb.map(f=>esc(f.op)+' ('+esc(f.category)+(f.source?', '+esc(f.source):'')+')').join('; ')+'</div>'}
const df=R.diffs[i];if(df&&(df.added.length||df.removed.length)){h+='<div><b>against the commit before</b>: '+
df.added.map(x=>'<span class="up">+ '+esc(x)+'</span>').join(' ')+' '+\
df.removed.map(x=>'<span class="down">− '+esc(x)+'</span>').join(' ')+'</div>'}
if(rp||cp){h+='<div>'+(rp?'<a href="'+esc(rp)+'">open the lowering report of this commit</a> ':'')+
(cp?'<a href="'+esc(cp)+'">compare with the commit before</a>':'')+'</div>'}
h+='<table>'+\
Object.entries(r.metrics||{}).map(([k,v])=>'<tr><td>'+esc(k)+'</td><td class="mono">'+esc(v)+'</td></tr>').join('')+'</table>';
d.innerHTML=h;d.style.display='block';
document.querySelectorAll('.pt').forEach(p=>p.setAttribute('stroke',p.dataset.i==i?'#000':'none'));}
function go(i,kind){const p=((R.links||{})[kind]||{})[i];if(p){window.location.href=p;return true}return false}
document.querySelectorAll('.pt').forEach(p=>p.addEventListener('click',()=>{if(!go(+p.dataset.i,'points'))show(+p.dataset.i)}));
document.querySelectorAll('.ch').forEach(p=>p.addEventListener('click',()=>{if(go(+p.dataset.i,'changes'))return;show(+p.dataset.i);
const c=document.getElementById('chart-'+p.dataset.m);if(c)c.scrollIntoView({block:'nearest'})}));
"""


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.3g}"
    return f"{int(v):,}" if isinstance(v, (int, float)) else str(v)


def chart_frame(metric: str, n: int, nums: list[Any]) -> tuple[list[str], Callable[[int], float],
                                                              Callable[[float], float]]:
    """The SVG's opening, axes and three value grid lines of a chart over `n` commits whose values span
    `nums`, and its x (commit position) and y (value) scales: the trends page's and the environments'."""
    lo, hi = (min(nums), max(nums)) if nums else (0, 1)
    if lo == hi:
        lo, hi = lo - (abs(lo) * 0.1 or 1), hi + (abs(hi) * 0.1 or 1)
    iw, ih = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def x(i: int) -> float:
        return PAD_L + (iw * i / (n - 1) if n > 1 else iw / 2)

    def y(v: float) -> float:
        return PAD_T + ih - (v - lo) / (hi - lo) * ih

    out = [f'<svg width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{_e(label(metric))}">',
           f'<line x1="{PAD_L}" y1="{PAD_T + ih}" x2="{W - PAD_R}" y2="{PAD_T + ih}" stroke="#ccd2da"/>',
           f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{PAD_T + ih}" stroke="#ccd2da"/>']
    for v in (lo, (lo + hi) / 2, hi):
        out.append(f'<text x="{PAD_L - 4}" y="{y(v) + 3:.1f}" text-anchor="end">{_e(_fmt(v))}</text>')
        out.append(f'<line x1="{PAD_L}" y1="{y(v):.1f}" x2="{W - PAD_R}" y2="{y(v):.1f}" stroke="#f0f2f5"/>')
    return out, x, y


def commit_labels(commits: list[str], x: Callable[[int], float]) -> list[str]:
    """At most 8 short commit ids, centred under their points (the trends page's and the environments')."""
    n = len(commits)
    return [f'<text x="{x(i):.1f}" y="{H - 8}" text-anchor="middle" class="mono">{_e(commits[i][:7])}</text>'
            for i in range(0, n, max(1, n // 8))]


def chart_svg(metric: str, records: list[Record], values: list[Any], changed: set[int],
              versions: list[tuple[int, str]]) -> str:
    """One metric over the commits: a line through the measured points, changes in orange, failures as
    red crosses on the axis, version changes as dashed verticals."""
    n = len(records)
    nums = [v for v in values if isinstance(v, (int, float))]
    out, x, y = chart_frame(metric, n, nums)
    iw, ih = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    for i, text in versions:
        xv = x(i) - (iw / (n - 1) / 2 if n > 1 else 0)
        out.append(f'<line x1="{xv:.1f}" y1="{PAD_T - 8}" x2="{xv:.1f}" y2="{PAD_T + ih}" stroke="#8e44ad" '
                   f'stroke-dasharray="4 3"><title>{_e(text)}</title></line>')
        out.append(f'<text x="{xv + 2:.1f}" y="{PAD_T - 10}" style="fill:#8e44ad">{_e(text)}</text>')
    pts = [(x(i), y(v)) for i, v in enumerate(values) if isinstance(v, (int, float))]
    if len(pts) > 1:
        out.append('<polyline fill="none" stroke="#3056d3" stroke-width="1.6" points="'
                   + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
    for i, (r, v) in enumerate(zip(records, values)):
        tip = _e(f"{r.short} {r.subject or ''}\n{label(metric)}: {_fmt(v)}" if r.ok else
                 f"{r.short} {r.subject or ''}\nfailed: {(r.error or {}).get('message', '')}")
        if not r.ok:
            cx, cy = x(i), PAD_T + ih
            out.append(f'<g class="pt" data-i="{i}"><title>{tip}</title><path d="M{cx - 5:.1f},{cy - 5:.1f}l10,10'
                       f'M{cx + 5:.1f},{cy - 5:.1f}l-10,10" stroke="#c0392b" stroke-width="2.2"/>'
                       f'<rect x="{cx - 6:.1f}" y="{cy - 6:.1f}" width="12" height="12" fill="transparent"/></g>')
        elif isinstance(v, (int, float)):
            color = "#e67e22" if i in changed else "#3056d3"
            out.append(f'<circle class="pt" data-i="{i}" cx="{x(i):.1f}" cy="{y(v):.1f}" r="{5 if i in changed else 3.5}" '
                       f'fill="{color}"><title>{tip}</title></circle>')
    out += commit_labels([r.commit for r in records], x)
    out.append("</svg>")
    return "".join(out)


def fallback_diffs(records: list[Record]) -> list[dict[str, list[str]]]:
    """Per record: the fallbacks (on the user's ops) added and removed against the record before it."""
    out: list[dict[str, list[str]]] = []
    prev: list[str] | None = None
    for r in records:
        cur = [f"{f['op']} ({f['category']})" for f in ((r.extra or {}).get("notes") or {}).get("fallbacks", [])] \
            if r.ok else None
        if prev is None or cur is None:
            out.append({"added": [], "removed": []})
        else:
            out.append({"added": [f for f in cur if f not in prev], "removed": [f for f in prev if f not in cur]})
        prev = cur if cur is not None else prev
    return out


def history_html(title: str, subtitle: str, records: list[Record], changes: list[Change],
                 links: dict[str, dict[int, str]] | None = None) -> str:
    """`links` (pages.write_pages): a click on a point opens that commit's lowering report, a click on a
    change the compare of the commit against the one before it."""
    names = [m for m in metric_names(records) if any(v is not None for v in series(records, m))]
    versions = [(c.index, f"{c.metric} {c.after}") for c in changes if c.kind == VERSION]
    diffs = fallback_diffs(records)
    items = []
    by_commit: dict[int, list[Change]] = {}
    for c in changes:
        by_commit.setdefault(c.index, []).append(c)
    for i, group in by_commit.items():
        c0 = group[0]
        lines = []
        for c in group:
            arrow = "" if c.delta is None else ("up" if c.delta > 0 else "down")
            lines.append(f"<span class='t {arrow}'>{_e(c.text())}</span>")
            if c.kind == METRIC and c.metric == "fallbacks":
                d = diffs[c.index]
                lines += [f"<span class='t up'>&nbsp;&nbsp;+ {_e(a)}</span>" for a in d["added"][:4]]
                lines += [f"<span class='t down'>&nbsp;&nbsp;− {_e(a)}</span>" for a in d["removed"][:4]]
        kinds = {c.kind for c in group}
        kind = STATUS if STATUS in kinds else VERSION if kinds == {VERSION} else METRIC
        items.append(f"<div class='ch {kind}' data-i='{i}' data-m='{_e(c0.metric)}'>"
                     f"<span class='c'>{_e(c0.commit[:8])}</span> <span class='s'>#{i + 1} {_e((c0.subject or '')[:56])}</span>"
                     f"{''.join(lines)}</div>")
    if not items:
        items.append("<div class='ch'>No change over these commits.</div>")
    charts = []
    for m in names:
        vals = series(records, m)
        changed = {c.index for c in changes if c.metric == m and c.kind == METRIC}
        charts.append(f"<div class='chart' id='chart-{_e(m)}'><h3>{_e(label(m))}</h3>"
                      f"{chart_svg(m, records, vals, changed, versions)}</div>")
    data = {"records": [{k: getattr(r, k) for k in ("commit", "subject", "commit_date", "branch", "dirty", "status",
                                                      "error", "versions", "metrics")} for r in records],
            "fallbacks": [((r.extra or {}).get("notes") or {}).get("fallbacks", []) for r in records],
            "diffs": diffs, "links": {k: {str(i): p for i, p in v.items()} for k, v in (links or {}).items()}}
    payload = json.dumps(data, default=str).replace("</", "<\\/")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<style>{_CSS}</style></head><body><header><h1>{_e(title)}</h1><div class='sub'>{_e(subtitle)}</div>"
            f"</header><main><section id='changes'><h2>Changes: {len(changes)} in {len(by_commit)} commit(s)</h2>"
            f"{''.join(items)}</section>"
            f"<section id='right'><div id='detail'></div><div id='charts'>{''.join(charts)}</div></section></main>"
            f"<script type='application/json' id='data'>{payload}</script><script>{_JS}</script></body></html>")
