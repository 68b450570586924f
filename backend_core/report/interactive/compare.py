"""`cmlens compare --html`: the N-way compare page. `compare_html(compare_dict, lowerings)` takes the
compare core's dict (`compare_to_dict`, `cmlens compare --json`, docs/json-format.md) and the lowering
reports of its sides, in the same order, and returns the page: the summary deltas and the fallbacks
added/removed as static tables on top; then the final graphs side by side with the deltas coloured on
the nodes, selection synced through the matching (one op on one side may be several on another), a
clickable "what changed" list and an inspector row with the matched node on every side; then one stage
viewer per side.

`compare_view` turns the compare dict into the viewer's own small shape (below), so the page's JS
does not depend on the compare JSON's field names:
    {sides: [label], note: str, summary: [[name, [value per side], delta text, worse?]],
     rows: [{label, match, delta: same|changed|fb_added|fb_removed|added|removed, what,
             sides: [null | {nodes, kind, cat, why, fix, q, arena, instr, sqnr, delta}]}]}
"""
from __future__ import annotations

import html
from typing import Any

from .bundle import lowering_bundle
from .page import page


def _e(x: Any) -> str:
    return html.escape(str(x))


def _first(d: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if isinstance(d, dict) and d.get(k) is not None:
            return d[k]
    return default


def side_labels(cmp: dict[str, Any]) -> list[str]:
    out = []
    for i, s in enumerate(cmp.get("sides") or []):
        out.append(s if isinstance(s, str) else str(_first(s, "label", "name", "model", default=chr(65 + i))))
    return out


def _qtext(q: Any) -> str:
    if q is None or q == {} or q == "":
        return ""
    if isinstance(q, str):
        return q
    from .nodes import qparam_text

    if isinstance(q, dict) and "dtype" in q:
        return qparam_text(q)
    if isinstance(q, dict):
        parts = [f"{k}: {_qtext(v)}" for k, v in q.items() if _qtext(v)]
        return "; ".join(parts)
    if isinstance(q, list):
        return "; ".join(_qtext(v) for v in q if _qtext(v))
    return str(q)


def _side_cell(c: Any) -> dict[str, Any] | None:
    if not c:
        return None
    nodes = _first(c, "nodes", default=None)
    if nodes is None:
        nodes = [c["node"]] if c.get("node") else []
    kind = _first(c, "kind", default="")
    status = _first(c, "status", "placement", default="")
    if not kind:
        kind = "portable_fallback" if status == "fallback" else "cmsis_nn" if status == "lowered" else ""
    return {"nodes": list(nodes), "kind": kind, "cat": _first(c, "category", default=""),
            "why": _first(c, "reason", default=""), "fix": _first(c, "suggestion", "fix", default=""),
            "q": _qtext(_first(c, "qparams", default=None)),
            "arena": _first(c, "arena_bytes", "arena_live_bytes", "live_bytes", default=None),
            "instr": _first(c, "instructions", default=None), "sqnr": _first(c, "sqnr", "sqnr_db", default=None)}


def _row_delta(row: dict[str, Any], cells: list[dict[str, Any] | None]) -> tuple[str, str]:
    """(delta class, one line for the "what changed" list)."""
    present = [c is not None for c in cells]
    if present and not present[0] and any(present[1:]):
        return "added", "added"
    if present and present[0] and not all(present):
        return "removed", "removed on " + ", ".join(str(i) for i, p in enumerate(present) if not p)
    kinds = [c["kind"] if c else "" for c in cells]
    fb = ["fallback" if k == "portable_fallback" else "lowered" if k else "" for k in kinds]
    if fb and fb[0] == "lowered" and "fallback" in fb[1:]:
        cat = next((c["cat"] for c in cells[1:] if c and c["kind"] == "portable_fallback"), "")
        return "fb_added", f"new fallback{': ' + cat if cat else ''}"
    if fb and fb[0] == "fallback" and "lowered" in fb[1:]:
        return "fb_removed", f"fallback removed{': was ' + cells[0]['cat'] if cells[0] and cells[0]['cat'] else ''}"
    changes = row.get("changes") or row.get("changed") or []
    if isinstance(changes, dict):
        changes = [k for k, v in changes.items() if v]
    if changes:
        return "changed", "changed: " + ", ".join(str(c) for c in changes)
    return "same", ""


def _row_label(row: dict[str, Any], cells: list[dict[str, Any] | None]) -> str:
    uo = row.get("user_op") or {}
    op = _first(row, "op", default="") or (uo.get("target") if isinstance(uo, dict) else "") or ""
    src = _first(row, "source", default="") or (uo.get("source") if isinstance(uo, dict) else "") or ""
    mod = _first(row, "module_path", "module", default="") or (uo.get("module") if isinstance(uo, dict) else "")
    if not op:
        first = next((c for c in cells if c), None)
        op = ", ".join(first["nodes"]) if first else "?"
    where = " ".join(x for x in (f"({mod})" if mod else "", src.rsplit("/", 1)[-1] if src else "") if x)
    return f"{op} {where}".strip()


def _summary(cmp: dict[str, Any], n: int) -> list[list[Any]]:
    """Rows of the summary table: [name, [value per side], delta, worse?]."""
    out: list[list[Any]] = []
    for d in cmp.get("summary_rows") or []:
        out.append([d.get("name", ""), list(d.get("values") or [None] * n), d.get("delta", ""), d.get("worse")])
    return out


def compare_view(cmp: dict[str, Any]) -> dict[str, Any]:
    labels = side_labels(cmp)
    rows = []
    for r in cmp.get("rows") or []:
        cells = [_side_cell(c) for c in (r.get("sides") or [])]
        delta, what = _row_delta(r, cells)
        rows.append({"label": _row_label(r, cells), "match": r.get("match", ""), "delta": delta,
                     "what": what, "sides": cells})
    return {"sides": labels, "note": cmp.get("note") or "", "summary": _summary(cmp, len(labels)),
            "rows": rows}


def _static_summary(view: dict[str, Any], lowerings: list[dict[str, Any]]) -> str:
    sides = view["sides"]
    parts = [f"<h1>Compare: {' · '.join(_e(s) for s in sides)}</h1><ul>"]
    for lab, rep in zip(sides, lowerings):
        opts = rep.get("options") or {}
        extra = ", channels_last" if opts.get("channels_last") else ""
        extra += f", {opts['activations']} activations" if opts.get("activations") else ""
        parts.append(f"<li><b>{_e(lab)}</b>: {_e(rep.get('model'))} → {_e(rep.get('target'))}, "
                     f"{_e(rep.get('flow'))} flow{_e(extra)}; {len(rep.get('fallbacks') or [])} fallback(s)</li>")
    parts.append("</ul>")
    if view["note"]:
        parts.append(f"<p class='fb'>{_e(view['note'])}</p>")
    if view["summary"]:
        parts.append("<table><tr><th></th>" + "".join(f"<th>{_e(s)}</th>" for s in sides) + "<th>Δ</th></tr>")
        for name, vals, delta, worse in view["summary"]:
            cls = " class='fb'" if worse is True else " class='ok'" if worse is False else ""
            parts.append(f"<tr><td>{_e(name)}</td>" + "".join(f"<td>{_e('—' if v is None else v)}</td>" for v in vals)
                         + f"<td{cls}>{_e(delta or '')}</td></tr>")
        parts.append("</table>")
    changed = [r for r in view["rows"] if r["delta"] != "same"]
    parts.append(f"<h2>What changed: {len(changed)}</h2>")
    if changed:
        parts.append("<table><tr><th>op (the user's line)</th><th>change</th>"
                     + "".join(f"<th>{_e(s)}</th>" for s in sides) + "</tr>")
        for r in changed:
            cells = []
            for c in r["sides"]:
                if c is None:
                    cells.append("<td class='dim'>—</td>")
                else:
                    fb = c["kind"] == "portable_fallback"
                    cells.append(f"<td{' class=fb' if fb else ''}>{'fallback' if fb else 'lowered' if c['kind'] else ''}"
                                 f"{': ' + _e(c['cat']) if c['cat'] else ''}"
                                 f"{'<br><small>' + _e(c['why']) + '</small>' if c['why'] else ''}</td>")
            parts.append(f"<tr><td>{_e(r['label'])}</td><td>{_e(r['what'])}</td>{''.join(cells)}</tr>")
        parts.append("</table>")
    return "\n".join(parts)


def compare_html(compare_dict: dict[str, Any], lowerings: list[dict[str, Any]]) -> str:
    """The compare page of `compare_dict` (compare_to_dict) over `lowerings` (one lowering report, with
    graphs, per side, in the order of the compare's sides)."""
    view = compare_view(compare_dict)
    if len(lowerings) != len(view["sides"]):
        raise ValueError(f"compare_html: {len(view['sides'])} sides in the compare but {len(lowerings)} "
                         "lowering reports were given (one per side, same order)")
    bundles = [lowering_bundle(rep, label=lab) for rep, lab in zip(lowerings, view["sides"])]
    return page(title="CortexM Lens — compare " + " · ".join(view["sides"]),
                top=_static_summary(view, lowerings), details="",
                data={"lowerings": bundles, "compare": view})
