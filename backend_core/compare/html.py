"""A static, self-contained HTML page of a comparison (no script, no network): the sides, the summary
deltas, the fallbacks added and removed with their reasons and lines, and the per-op table coloured
by each side's status. The comparison's JSON (compare_to_dict) is embedded as
`<script type="application/json" id="cmlens-compare">` for tools that want the data."""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import resources

from .facts import BOUNDARY, DATA, DELEGATE, FALLBACK, FUSED, GONE, LOWERED
from .result import Comparison, compare_to_dict
from .rows import Cell

_KIND_OF_STATUS = {LOWERED: "cmsis_nn", FALLBACK: "portable_fallback", DATA: "data_movement",
                   BOUNDARY: "quant_boundary", DELEGATE: "delegate", FUSED: "plumbing", GONE: "plumbing"}


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _n(v: Any, unit: str = "") -> str:
    if v is None:
        return "–"
    return (f"{v:,.2f}" if isinstance(v, float) else f"{v:,}") + unit


def _delta(d: dict[str, Any], unit: str = "") -> str:
    if d.get("delta") is None:
        return ""
    cls = "up" if d["delta"] > 0 else "down" if d["delta"] < 0 else ""
    pct = f" ({d['pct']:+.1f} %)" if d.get("pct") is not None else ""
    dv = d["delta"]
    txt = (f"{dv:+,.2f}" if isinstance(dv, float) else f"{dv:+,}") + unit + pct
    return f'<span class="{cls}">{_e(txt)}</span>'


def _css() -> str:
    colors = resources.node_kind_colors()
    kinds = "".join(f".k-{k}{{background:{c['fill']};border-left:4px solid {c['border']};color:{c['text']}}}"
                    for k, c in colors.items())
    return (resources.text("styles", "report.css") + kinds +
            ".up{color:#b71c1c}.down{color:#2e7d32}.weak{color:#e65100;font-weight:bold}"
            ".cell{font-size:12px}.cell small{color:#455a64;display:block}.ch td:first-child,.ch td:last-child{background:#fffde7}"
            ".add td:first-child{border-left:4px solid #2e7d32}.rem td:first-child{border-left:4px solid #b71c1c}"
            "td.reason{max-width:520px}")


def _cell(c: Cell | None, match: str) -> str:
    if c is None:
        return '<td class="cell"><i>not visible (no provenance)</i></td>' if match == "n/a" else \
            '<td class="cell">—</td>'
    kind = _KIND_OF_STATUS.get(c.status, "plumbing")
    head = c.status.upper() if c.status == FALLBACK else c.status
    if c.status == FALLBACK:
        head += f" · {c.category}"
    if c.status == FUSED and c.fused_into:
        head += f" into {c.fused_into}"
    bits = [", ".join(o.split(".", 1)[-1] for o in c.ops)]
    if c.shape is not None:
        bits.append(str(list(c.shape)))
    if c.qparams_text:
        bits.append(c.qparams_text)
    if c.arena_bytes is not None:
        bits.append(f"arena {c.arena_bytes:,} B alive" + (f", scratch {c.scratch_bytes:,} B" if c.scratch_bytes else ""))
    if c.instructions is not None:
        bits.append(f"{c.instructions:,} instructions")
    if c.sqnr_db is not None:
        bits.append(f"SQNR {c.sqnr_db:.1f} dB")
    if match == "weak":
        bits.append('<span class="weak">weak match</span>')
    small = "".join(f"<small>{b if b.startswith('<span') else _e(b)}</small>" for b in bits if b)
    title = f' title="{_e(c.reason)}"' if c.reason else ""
    return f'<td class="cell k-{kind}"{title}><b>{_e(head)}</b>{small}</td>'


def _fallback_table(title: str, rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    body = "".join(f"<tr><td>{_e(f['label'])}</td><td class='fb'>{_e(f['category'])}</td><td>{_e(f.get('source'))}"
                   f"</td><td class='reason'>{_e(f['reason'])}</td></tr>" for f in rows)
    return (f"<h3>{_e(title)} ({len(rows)})</h3><table><tr><th>op the user wrote</th><th>category</th>"
            f"<th>line</th><th>reason</th></tr>{body}</table>")


def _deltas(c: Comparison, d: dict[str, Any]) -> str:
    s = d["side"]
    out = [f"<h2>[{s + 1}] {_e(c.sides[s].label)} against [1] {_e(c.sides[0].label)}</h2>"]
    fc = d["fallback_count"]
    out.append(f"<p>fallbacks: <b>{fc['base']} → {fc['value']}</b>; qparams changed beyond rtol {c.rtol:g}: "
               f"<b>{len(d['qparams_changed'])}</b> op(s); ops added {len(d['ops_added'])}, removed "
               f"{len(d['ops_removed'])}</p>")
    out.append(_fallback_table("fallbacks added", d["fallbacks_added"]))
    out.append(_fallback_table("fallbacks removed", d["fallbacks_removed"]))
    out.append(_fallback_table("fallbacks with another category", d["fallbacks_recategorised"]))
    rows = []
    for m in (d["memory"] or {}).values():
        rows.append((m["what"], _n(m["base"], " B"), _n(m["value"], " B"), _delta(m, " B")))
    ins = d["instructions"]
    if ins:
        unit = ins["unit"] or "instructions"
        rows.append((f"total ({unit})", _n(ins["total"]["base"]), _n(ins["total"]["value"]), _delta(ins["total"])))
        rows.append(("kernels", _n(ins["ops_total"]["base"]), _n(ins["ops_total"]["value"]), _delta(ins["ops_total"])))
        for i in ins["islands"]:
            rows.append((f"island {i['name']}", _n(i["base"]), _n(i["value"]), _delta(i)))
    if d["sqnr"]:
        o = d["sqnr"]["output_sqnr_db"]
        rows.append((f"output SQNR vs float ({d['sqnr']['inputs']})", _n(o["base"], " dB"), _n(o["value"], " dB"),
                     _delta(o, " dB")))
    if rows:
        out.append("<table><tr><th></th><th>[1]</th><th>[%d]</th><th>delta</th></tr>" % (s + 1) + "".join(
            f"<tr><td>{_e(a)}</td><td>{b}</td><td>{v}</td><td>{dl}</td></tr>" for a, b, v, dl in rows) + "</table>")
    return "".join(out)


def comparison_html(c: Comparison, *, all_rows: bool = True) -> str:
    sides = "".join(
        f"<tr><td>[{i + 1}]</td><td>{_e(s.label)}</td><td>{_e(s.kind)}</td><td>{_e(s.model)}</td><td>{_e(s.target)}"
        f"</td><td>{_e(s.flow)}</td><td>{_e(s.options.get('activations') or '')}</td>"
        f"<td>{'channels-last' if s.options.get('channels_last') else 'as given'}</td>"
        f"<td>{len(s.fallback_groups())}</td><td>{'full' if s.provenance == 'full' else '<span class=weak>none: weak match</span>'}"
        f"</td></tr>" for i, s in enumerate(c.sides))
    notes = "".join(f"<p class='weak'>note: {_e(n)}</p>" for n in c.notes)
    shown = [r for r in c.rows if all_rows or r.change != "same"]
    head = "".join(f"<th>[{i + 1}] {_e(s.label)}</th>" for i, s in enumerate(c.sides))
    body = []
    for r in shown:
        cls = {"changed": "ch", "added": "add", "removed": "rem"}.get(r.change, "")
        cells = "".join(_cell(cell, r.match[i] if r.match else "") for i, cell in enumerate(r.cells))
        what = "; ".join(f"[{i + 1}] " + "; ".join(ch) for i, ch in enumerate(r.changes) if ch)
        body.append(f"<tr class='{cls}'><td><b>{_e(r.label)}</b><small style='display:block'>{_e(r.source or '')}"
                    f"</small></td>{cells}<td>{_e(r.change)}</td><td class='reason'>{_e(what)}</td></tr>")
    data = json.dumps(compare_to_dict(c), allow_nan=False, default=str).replace("</", "<\\/")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>cmlens compare</title><style>{_css()}"
            f"</style></head><body><h1>cmlens compare: {len(c.sides)} sides</h1>"
            "<p>Ops are matched by what the user wrote (module path + source line + op at quantisation time), "
            "never by node names.</p>"
            "<table><tr><th></th><th>side</th><th>kind</th><th>model</th><th>target</th><th>flow</th>"
            f"<th>activations</th><th>layout</th><th>fallbacks</th><th>provenance</th></tr>{sides}</table>{notes}"
            + "".join(_deltas(c, d) for d in c.deltas)
            + f"<h2>Per op ({len(c.rows)} ops, {sum(r.change != 'same' for r in c.rows)} differ)</h2>"
            f"<table><tr><th>op the user wrote</th>{head}<th>change</th><th>what changed</th></tr>{''.join(body)}"
            f"</table><script type='application/json' id='cmlens-compare'>{data}</script></body></html>")


def write_comparison_html(c: Comparison, path: str) -> str:
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(comparison_html(c), encoding="utf-8")
    return str(p)
