"""`cmlens compare --html`: the N-way compare page. `compare_html(compare_dict, lowerings)` takes the
compare core's dict (`compare_to_dict`, `cmlens compare --json`, docs/json-format.md) and the lowering
reports of its sides, in the same order, and returns the page: the summary deltas and the fallbacks
added/removed as static tables on top; then the final graphs side by side with the deltas coloured on
the nodes, selection synced through the matching (one op on one side may be several on another), a
clickable "what changed" list and an inspector row with the matched node on every side; then one stage
viewer per side.

`compare_view` turns the compare dict into the viewer's own small shape (below), so the page's JS
does not depend on the compare JSON's field names:
    {sides: ["[1] label"], note, weak, summary: [[name, [value per side], [delta vs [1] per side], [worse?]]],
     rows: [{label, source, match: [per side], change, delta: same|changed|fb_added|fb_removed|added|removed,
             what, changes: [[str] per side],
             sides: [null | {nodes, via (a fused op: its host's nodes), status, kind, ops, cat, why, fix,
                             q, arena, scratch, instr, sqnr, fused_into, match, shape, delta}]}]}
"""
from __future__ import annotations

import html
from typing import Any

from backend_core.analyses.report.interactive.bundle import empty_bundle, lowering_bundle
from backend_core.analyses.report.interactive.page import page


def _e(x: Any) -> str:
    return html.escape(str(x))


# a compare cell's status (backend_core.orchestration.compare.facts) -> the node kind its colour comes from
_KIND_OF_STATUS = {"lowered": "cmsis_nn", "fallback": "portable_fallback", "data movement": "data_movement",
                   "q/dq": "quant_boundary", "delegate": "delegate", "fused": "plumbing", "gone": "plumbing"}


def side_labels(cmp: dict[str, Any]) -> list[str]:
    return [f"[{i + 1}] {s.get('label') or s.get('model', '')}" for i, s in enumerate(cmp.get("sides") or [])]


def _q1(q: dict[str, Any]) -> str:
    if not isinstance(q, dict):
        return str(q)
    if "scales" in q and q.get("scales"):
        sc = q["scales"]
        return f"{q.get('dtype')} per-channel {len(sc)} scales [{min(sc):.4g}, {max(sc):.4g}] zp={q.get('zero_point')}"
    if "scale" in q:
        return f"{q.get('dtype')} s={q['scale']:.4g} zp={q.get('zero_point')}"
    if "effective_scales" in q:
        eff = q["effective_scales"] or []
        return (f"{len(eff)} effective scale(s)" if len(eff) != 1 else f"effective scale {eff[0]:.4g}") + "".join(
            f", {k}={q[k]}" for k in ("input_offset", "output_offset") if k in q)
    return ", ".join(f"{k}={v}" for k, v in q.items())


def qparams_text(qp: dict[str, Any] | None) -> str:
    """A cell's qparams ({inputs: {i: q}, output: q, requant: r}) in one line."""
    if not qp:
        return ""
    parts = [f"in{i}: {_q1(q)}" for i, q in (qp.get("inputs") or {}).items()]
    if qp.get("output"):
        parts.append(f"out: {_q1(qp['output'])}")
    if qp.get("requant"):
        parts.append(f"requant: {_q1(qp['requant'])}")
    return "; ".join(parts)


def _cell(c: dict[str, Any] | None) -> dict[str, Any] | None:
    if not c:
        return None
    return {"nodes": list(c.get("nodes") or []), "status": c.get("status", ""),
            "kind": _KIND_OF_STATUS.get(c.get("status", ""), "plumbing"), "ops": list(c.get("ops") or []),
            "cat": c.get("category") or "", "why": c.get("reason") or "", "fix": c.get("suggestion") or "",
            "q": qparams_text(c.get("qparams")), "arena": c.get("arena_bytes"), "scratch": c.get("scratch_bytes"),
            "instr": c.get("instructions"), "ms": c.get("ms"), "sqnr": c.get("sqnr_db"), "fused_into": c.get("fused_into"),
            "match": c.get("match", ""), "shape": c.get("shape")}


def _side_delta(row: dict[str, Any], s: int, cells: list[dict[str, Any] | None]) -> str:
    """How side `s` of a row is coloured: fb_added / fb_removed / changed / added / removed / ""."""
    c, base = cells[s], cells[0]
    if c is None:
        return ""
    if row["change"] == "added":                           # a new op; a new fallback is the news
        return "fb_added" if c["status"] == "fallback" else "added"
    if s == 0:
        return "removed" if row["change"] == "removed" else "changed" if row["change"] == "changed" else ""
    if base is not None and c["status"] == "fallback" and base["status"] != "fallback":
        return "fb_added"
    if base is not None and base["status"] == "fallback" and c["status"] != "fallback":
        return "fb_removed"
    return "changed" if (row.get("changes") or [[]] * (s + 1))[s] else ""


_PRIORITY = ("fb_added", "fb_removed", "removed", "added", "changed")


def _short_change(text: str) -> str:
    """"arena alive: 80 -> 96 B (+20.0 %)" -> "arena alive +20.0 %"; "qparams: ..." -> "qparams"."""
    key, _, rest = text.partition(": ")
    sized = key in ("arena alive", "scratch", "instructions")
    pct = rest[rest.rfind("(") + 1:rest.rfind(")")] if sized and rest.endswith("%)") else ""
    return f"{key} {pct}".strip()


def _what(row: dict[str, Any], labels: list[str], deltas: list[str]) -> str:
    """The "what changed" headline of a row (the details are in the inspector row)."""
    d = next((p for p in _PRIORITY if p in deltas), "")
    cells = row["cells"]
    tag = [lab.split(" ", 1)[0] for lab in labels]           # "[2]"
    on = ", ".join(tag[i] for i, x in enumerate(deltas) if x == d)
    if d == "fb_added":
        cats = sorted({cells[i].get("category") or "?" for i, x in enumerate(deltas) if x == d})
        new = " (a new op)" if row["change"] == "added" else ""
        return f"new fallback on {on}{new}: {', '.join(cats)}"
    if d == "fb_removed":
        return f"fallback gone on {on} (was {cells[0].get('category') or '?'})"
    if d == "added":
        return "only on " + ", ".join(tag[i] for i, c in enumerate(cells) if c)
    if d == "removed":
        return "not on " + ", ".join(tag[i] for i, c in enumerate(cells) if c is None)
    ch = [f"{tag[i]} " + ", ".join(_short_change(x) for x in xs) for i, xs in enumerate(row.get("changes") or []) if xs]
    return "changed on " + "; ".join(ch)


def _host_nodes(rows: list[dict[str, Any]], views: list[dict[str, Any]], n: int) -> None:
    """A fused activation (many -> one) has no kernel of its own (at most the dequantize of its output):
    point its cell at the nodes of the op it was folded into (`fused_into` is that op's row label) too,
    so selecting it selects the host, and selecting the host selects its row."""
    by_label = {r["label"]: i for i, r in enumerate(rows)}
    for _row, v in zip(rows, views):
        for s in range(n):
            c = v["sides"][s]
            if c and c["fused_into"] and c["fused_into"] in by_label:
                host = views[by_label[c["fused_into"]]]["sides"][s]
                c["via"] = list(host["nodes"]) if host else []


def _places(unit: str) -> int:
    """Milliseconds to the microsecond (a small fallback's 0.052 ms), the rest to 2 places."""
    return 3 if unit == " ms" else 2


def _fmt(v: Any, unit: str = "") -> str | None:
    if v is None:
        return None
    return (f"{v:,.{_places(unit)}f}" if isinstance(v, float) else f"{v:,}") + unit


def _dtext(d: dict[str, Any], unit: str = "") -> str:
    if d.get("delta") is None:
        return ""
    dv = d["delta"]
    txt = (f"{dv:+,.{_places(unit)}f}" if isinstance(dv, float) else f"{dv:+,}") + unit
    return txt + (f" ({d['pct']:+.1f} %)" if d.get("pct") is not None else "")


def _summary(cmp: dict[str, Any], n: int) -> list[list[Any]]:
    """[name, [value per side], [delta against side 1 per side, "" for side 1], [worse? per side]] from
    the compare's `deltas` (side 1 is the reference of every delta)."""
    deltas = {d["side"]: d for d in cmp.get("deltas") or []}
    if not deltas:
        return []
    rows: list[list[Any]] = []

    def add(name: str, pick, unit: str = "", higher_is_worse: bool = True) -> None:
        per = [pick(deltas[s]) if s in deltas else None for s in range(1, n)]
        if all(p is None for p in per):
            return
        first = next(p for p in per if p is not None)
        vals = [_fmt(first.get("base"), unit)] + [_fmt(p.get("value"), unit) if p else None for p in per]
        if all(v is None for v in vals):
            return
        texts = [""] + [_dtext(p, unit) if p else "" for p in per]
        worse = [None] + [None if not p or not p.get("delta") else (p["delta"] > 0) == higher_is_worse for p in per]
        rows.append([name, vals, texts, worse])

    add("fallbacks", lambda d: d["fallback_count"])
    first = next(iter(deltas.values()))
    for key, m in (first.get("memory") or {}).items():
        add(m["what"], lambda d, k=key: (d.get("memory") or {}).get(k), " B")
    if first.get("instructions"):
        unit = first["instructions"].get("unit") or "instructions"
        add(f"total {unit}", lambda d: (d.get("instructions") or {}).get("total"))
        e = first["instructions"].get("estimate") or {}
        if e:                                  # the cycle estimate: ms to the microsecond
            add(f"estimated ms (kernels, {e.get('board') or e.get('core')} @ {e.get('clock_mhz') or 0:g} MHz)",
                lambda d: (d.get("instructions") or {}).get("ms"), " ms")
    if first.get("sqnr"):
        add("output SQNR vs float", lambda d: (d.get("sqnr") or {}).get("output_sqnr_db"), " dB", False)
    if first.get("accuracy"):
        add("top-1 accuracy (lowered)", lambda d: (d.get("accuracy") or {}).get("top1"), " %", False)
        if rows and rows[-1][0] == "top-1 accuracy (lowered)":          # a difference of percentages: points
            rows[-1][2] = [t.replace(" %", " points") for t in rows[-1][2]]
        add("prediction flips vs float", lambda d: (d.get("accuracy") or {}).get("flips"))
    return rows


def compare_view(cmp: dict[str, Any]) -> dict[str, Any]:
    """The compare JSON (format `cmlens-compare`) in the viewer's shape (see the module docstring)."""
    labels = side_labels(cmp)
    n = len(labels)
    rows = cmp.get("rows") or []
    views = []
    for r in rows:
        cells = [_cell(c) for c in r.get("cells") or []]
        cells += [None] * (n - len(cells))
        deltas = [_side_delta(r, s, cells) for s in range(n)]
        for c, d in zip(cells, deltas):
            if c is not None:
                c["delta"] = d
        top = next((p for p in _PRIORITY if p in deltas), "same")
        views.append({"label": r.get("label", ""), "source": r.get("source") or "", "match": r.get("match") or [],
                      "weak": bool(r.get("weak")), "change": r.get("change", "same"), "delta": top,
                      "what": _what(r, labels, deltas) if top != "same" else "",
                      "changes": r.get("changes") or [], "sides": cells})
    _host_nodes(rows, views, n)
    note = " ".join(cmp.get("notes") or [])
    return {"sides": labels, "note": note, "weak": bool(cmp.get("weak_match")),
            "summary": _summary(cmp, n), "rows": views}


def _fallback_table(title: str, rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    body = "".join(f"<tr><td>{_e(f.get('label'))}</td><td class='fb'>{_e(f.get('category'))}</td>"
                   f"<td>{_e(f.get('source') or '')}</td><td>{_e(f.get('reason'))}</td></tr>" for f in rows)
    return (f"<h3>{_e(title)} ({len(rows)})</h3><table><tr><th>op the user wrote</th><th>category</th>"
            f"<th>line</th><th>reason</th></tr>{body}</table>")


def _static_top(cmp: dict[str, Any], view: dict[str, Any]) -> str:
    """For people who only read: the sides, the notes, the summary deltas, fallbacks added/removed."""
    labels = view["sides"]
    parts = [f"<h1>cmlens compare: {' · '.join(_e(s) for s in labels)}</h1>",
             "<p>Ops are matched by what the user wrote (module path + source line + op at quantisation "
             "time), never by node names.</p><table><tr><th>side</th><th>model</th><th>target</th><th>flow</th>"
             "<th>activations</th><th>layout</th><th>fallbacks</th><th>provenance</th></tr>"]
    for lab, sd in zip(labels, cmp.get("sides") or []):
        opts = sd.get("options") or {}
        prov = sd.get("provenance", "")
        parts.append(f"<tr><td><b>{_e(lab)}</b></td><td>{_e(sd.get('model'))}</td><td>{_e(sd.get('target'))}</td>"
                     f"<td>{_e(sd.get('flow'))}</td><td>{_e(opts.get('activations') or 'int8')}</td>"
                     f"<td>{'channels-last' if opts.get('channels_last') else 'as given'}</td>"
                     f"<td>{len(sd.get('fallbacks') or [])}</td>"
                     f"<td{' class=fb' if prov == 'weak' else ''}>{_e(prov + (': weak match' if prov == 'weak' else ''))}"
                     "</td></tr>")
    parts.append("</table>")
    parts.extend(f"<p class='fb'>note: {_e(n)}</p>" for n in cmp.get("notes") or [])
    if view["summary"]:
        parts.append("<table><tr><th></th>" + "".join(f"<th>{_e(s)}</th>" for s in labels) + "</tr>")
        for name, vals, texts, worse in view["summary"]:
            cells = []
            for v, t, w in zip(vals, texts, worse):
                cls = " class='fb'" if w is True else " class='ok'" if w is False else ""
                cells.append(f"<td>{_e('—' if v is None else v)}" + (f"<br><small{cls}>{_e(t)}</small>" if t else "") + "</td>")
            parts.append(f"<tr><td>{_e(name)}</td>{''.join(cells)}</tr>")
        parts.append("</table><p class='dim'>Deltas are against [1].</p>")
    for d in cmp.get("deltas") or []:
        lab = labels[d["side"]] if d["side"] < len(labels) else str(d["side"])
        parts.append(_fallback_table(f"fallbacks added on {lab}", d.get("fallbacks_added") or []))
        parts.append(_fallback_table(f"fallbacks removed on {lab}", d.get("fallbacks_removed") or []))
        parts.append(_fallback_table(f"fallbacks with another category on {lab}", d.get("fallbacks_recategorised") or []))
    return "\n".join(p for p in parts if p)


def _static_rows(view: dict[str, Any]) -> str:
    """Below the viewer: every op that differs, per side."""
    labels = view["sides"]
    changed = [r for r in view["rows"] if r["delta"] != "same"]
    parts = [f"<h2>Per op: {len(changed)} of {len(view['rows'])} differ</h2>"]
    if changed:
        parts.append("<table><tr><th>op the user wrote</th>" + "".join(f"<th>{_e(s)}</th>" for s in labels)
                     + "<th>what changed</th></tr>")
        for r in changed:
            cells = []
            for c in r["sides"]:
                if c is None:
                    cells.append("<td>—</td>")
                    continue
                fb = c["status"] == "fallback"
                cells.append(f"<td{' class=fb' if fb else ''}>{_e(c['status'])}{': ' + _e(c['cat']) if c['cat'] else ''}"
                             f"<br><small>{_e(', '.join(c['ops']))}</small></td>")
            what = "; ".join(f"{labels[i]}: {'; '.join(x)}" for i, x in enumerate(r["changes"]) if x)
            parts.append(f"<tr><td>{_e(r['label'])}<br><small>{_e(r['source'])}</small></td>{''.join(cells)}"
                         f"<td>{_e(what or r['what'])}</td></tr>")
        parts.append("</table>")
    return "\n".join(parts)


def compare_html(compare_dict: dict[str, Any], lowerings: list[dict[str, Any] | None] | None = None) -> str:
    """The compare page of `compare_dict` (compare_to_dict) over `lowerings`: one lowering report with
    graphs per side, in the order of the compare's sides (None: the dict's own `reports`, written by
    `compare_to_dict(..., reports=True)`). A side without a report (a baseline) has no graph pane."""
    view = compare_view(compare_dict)
    if lowerings is None:
        lowerings = list(compare_dict.get("reports") or [None] * len(view["sides"]))
    if len(lowerings) != len(view["sides"]):
        raise ValueError(f"compare_html: {len(view['sides'])} sides in the compare but {len(lowerings)} "
                         "lowering reports were given (one per side, same order)")
    bundles = [lowering_bundle(rep, label=lab) if rep and rep.get("stages") else empty_bundle(lab, side)
               for rep, lab, side in zip(lowerings, view["sides"], compare_dict.get("sides") or [])]
    return page(title="CortexM Lens — compare " + " · ".join(view["sides"]),
                top=_static_top(compare_dict, view), details=_static_rows(view),
                data={"lowerings": bundles, "compare": view},
                extra_json={"cmlens-compare": {k: v for k, v in compare_dict.items() if k != "reports"}})
