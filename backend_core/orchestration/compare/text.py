"""The comparison as terminal text: the sides, the summary deltas against side 1, then the ops that
changed (every op with `all_rows`), each side on its own line under the op the user wrote."""
from __future__ import annotations

import os
import textwrap
from typing import Any

from backend_core.orchestration.compare.facts import FALLBACK, FUSED, SideFacts
from backend_core.orchestration.compare.matching import REFERENCE
from backend_core.orchestration.compare.result import Comparison
from backend_core.orchestration.compare.rows import Cell, RowView, ops_text

WIDTH = 100


def _where(source: str | None) -> str:
    """`  [path:line]`, the path relative to the current folder when it is under it."""
    if not source:
        return ""
    path, _, line = source.rpartition(":")
    try:
        rel = os.path.relpath(path)
        path = rel if not rel.startswith("..") else path
    except ValueError:
        pass
    return f"  [{path}:{line}]"


def _n(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}"


def _d(d: dict[str, Any], unit: str = "") -> str:
    if d["delta"] is None:
        return ""
    pct = f" ({d['pct']:+.1f} %)" if d.get("pct") is not None else ""
    dv = d["delta"]
    return (f"{dv:+,.2f}" if isinstance(dv, float) else f"{dv:+,}") + unit + pct


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:,.3f}"


def _dms(d: dict[str, Any]) -> str:
    """An estimated-ms delta to the microsecond: a small fallback's 0.05 ms would round away at 2 places."""
    if d["delta"] is None:
        return ""
    return f"{d['delta']:+,.3f} ms" + (f" ({d['pct']:+.1f} %)" if d.get("pct") is not None else "")


def _options(s: SideFacts) -> str:
    if s.kind == "artefact":
        return f"{s.flow} read back"
    cl = "channels-last" if s.options.get("channels_last") else "as given"
    return f"{s.target}, {s.flow}, {s.options.get('activations') or 'int8'}, {cl}"


def _side_lines(c: Comparison) -> list[str]:
    out = []
    w = max(len(s.label) for s in c.sides)
    for i, s in enumerate(c.sides):
        lowered = sum(1 for g in s.groups if g.status == "lowered")
        tags = []
        if i == c.reference and len(c.sides) > 1:
            tags.append("matching reference")
        if s.provenance != "full":
            tags.append("NO PROVENANCE: weak match")
        out.append(f"  [{i + 1}] {s.label:{w}}  {s.kind:9} {_options(s)}; {lowered} ops on CMSIS-NN, "
                   f"{len(s.fallback_groups())} fallback(s)" + (f"  ({'; '.join(tags)})" if tags else ""))
    return out


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent) or [indent]


def _fallback_lines(sign: str, f: dict[str, Any]) -> list[str]:
    where = _where(f.get("source"))
    weak = "  (weak match)" if f.get("match") == "weak" else ""
    lines = [f"    {sign} {f['label']}  — {f['category']}{where}{weak}"]
    if f.get("base_category"):
        lines.append(f"        was {f['base_category']}")
    lines += _wrap(f["reason"], "        ")
    return lines


def _summary(c: Comparison, d: dict[str, Any]) -> list[str]:
    s = d["side"]
    out = [f"[{s + 1}] {c.sides[s].label} against [1] {c.sides[0].label}:"]
    fc = d["fallback_count"]
    out.append(f"  fallbacks: {fc['base']} -> {fc['value']}"
               + (f"   (+{len(d['fallbacks_added'])} added, -{len(d['fallbacks_removed'])} removed)"
                  if d["fallbacks_added"] or d["fallbacks_removed"] else "   (no fallback changed)"))
    for f in d["fallbacks_added"]:
        out += _fallback_lines("+", f)
    for f in d["fallbacks_removed"]:
        out += _fallback_lines("-", f)
    for f in d["fallbacks_recategorised"]:
        out += _fallback_lines("~", f)
    for key, sign in (("ops_added", "+"), ("ops_removed", "-")):
        rows = d[key]
        if rows:
            out.append(f"  ops {key[4:]}: {len(rows)}")
            for r in rows[:12]:
                src = _where(r.get("source"))
                out.append(f"    {sign} {r['label']}  ({r['status']}: {ops_text(r['ops']) or 'no kernel'}){src}")
            if len(rows) > 12:
                out.append(f"    … {len(rows) - 12} more")
    qp = d["qparams_changed"]
    out.append(f"  qparams changed beyond rtol {c.rtol:g}: {len(qp)} op(s)"
               + ("" if not qp else f" (first: {qp[0]['label']}: {qp[0]['differences']})"))
    if d["memory"]:
        out.append(f"  memory (bytes){'':33} {'[1]':>12} {f'[{s + 1}]':>12}  delta")
        for m in d["memory"].values():
            out.append(f"    {m['what']:42} {_n(m['base']):>12} {_n(m['value']):>12}  {_d(m)}")
    ins = d["instructions"]
    if ins:
        out.append(f"  instructions ({ins['unit'] or 'profile unit'}): total {_n(ins['total']['base'])} -> "
                   f"{_n(ins['total']['value'])} {_d(ins['total'])}; kernels {_n(ins['ops_total']['base'])} -> "
                   f"{_n(ins['ops_total']['value'])} {_d(ins['ops_total'])}")
        if ins.get("ms") and (ins["ms"]["base"] is not None or ins["ms"]["value"] is not None):
            e = ins.get("estimate") or {}
            out.append(f"  estimated ms (kernels, {e.get('board') or e.get('core') or '?'} @ {e.get('clock_mhz') or 0:g} MHz"
                       f"{'' if e.get('error_pct') is None else ', ±' + format(e['error_pct'], '.0f') + ' %'}): "
                       f"{_ms(ins['ms']['base'])} -> {_ms(ins['ms']['value'])} {_dms(ins['ms'])}")
        for isl in ins["islands"]:
            est = (f"; ≈ {_ms(isl['ms']['base'])} -> {_ms(isl['ms']['value'])} ms"
                   if (isl.get("ms") or {}).get("value") is not None or (isl.get("ms") or {}).get("base") is not None
                   else "")
            out.append(f"    island {isl['name']}: {_n(isl['base'])} -> {_n(isl['value'])} {_d(isl)}".rstrip() + est)
    elif not any(x.profile for x in c.sides):
        out.append("  instructions: no profile on either side (attach one: SIDE@profile=RUN.json)")
    sq = d["sqnr"]
    if sq:
        o = sq["output_sqnr_db"]
        out.append(f"  SQNR at the output, lowered vs float ({sq['inputs']}): {_n(o['base'])} dB -> "
                   f"{_n(o['value'])} dB {_d(o, ' dB')}")
    out += _accuracy_lines(d.get("accuracy"), s + 1)
    return out


def _accuracy_lines(acc: dict[str, Any] | None, side: int) -> list[str]:
    """"accuracy (450 samples of get_eval_data() ...): top-1 lowered 97.33 % -> 92.00 % (-5.33 points)"."""
    if not acc:
        return []
    t, ag, fl = acc["top1"], acc["agreement"], acc["flips"]
    if t["base"] is None or t["value"] is None:
        have = "[1]" if t["base"] is not None else "the other side"
        return [f"  accuracy: evaluated on {have} only (evaluate both: --accuracy N, or `cmlens evaluate --json` "
                "reports as sides)"]

    def pts(x: dict[str, Any]) -> str:
        return "" if x["delta"] is None else f"({x['delta']:+.2f} points)"

    ft, sq = acc.get("float_top1") or {}, acc.get("output_sqnr_db") or {}
    fl_text = f"float {ft['value']:.2f} %, " if ft.get("value") is not None and ft.get("value") == ft.get("base") else ""
    line = (f"  accuracy ({acc['samples']} samples, {acc['data']}): top-1 {fl_text}lowered {t['base']:.2f} % -> "
            f"{t['value']:.2f} % {pts(t)}")
    if sq.get("base") is not None and sq.get("value") is not None:
        line += f"; output SQNR vs float {sq['base']:.1f} -> {sq['value']:.1f} dB ({sq['delta']:+.1f} dB)"
    if ag["base"] is not None and ag["value"] is not None:
        line += f"; agreement with float {ag['base']:.2f} % -> {ag['value']:.2f} % {pts(ag)}"
    if fl["base"] is not None and fl["value"] is not None:
        line += f"; flips {fl['base']} -> {fl['value']}"
    out = _wrap(line.strip(), "  ")
    out[0] = "  " + out[0].lstrip()
    if not acc["same_data"]:
        out.append("    note: the two were evaluated on other data or sample counts: the delta is not comparable")
    if acc.get("by_layer") and fl.get("value"):
        g = acc["by_layer"][0]
        out.append(f"    [{side}]'s flips start most at {g['label'] or g['layer']} ({g['flips']} of {fl['value']})")
    return out


def _cell_line(i: int, c: Cell | None, match: str) -> str:
    if c is None:
        return f"    [{i + 1}] " + ("(not visible: no provenance)" if match == "n/a" else "—  not on this side")
    status = c.status.upper() if c.status == FALLBACK else c.status
    what = f"{status} {c.category}" if c.status == FALLBACK else status
    if c.status == FUSED:
        what += f" into {c.fused_into}" if c.fused_into else ""
    parts = [what, ops_text([o.split(".", 1)[-1] for o in c.ops])]
    if c.shape is not None:
        parts.append(f"{list(c.shape)}")
    if c.qparams_text:
        parts.append(c.qparams_text)
    if c.arena_bytes is not None:
        parts.append(f"arena {c.arena_bytes:,} B alive")
    if c.scratch_bytes:
        parts.append(f"scratch {c.scratch_bytes:,} B")
    if c.instructions is not None:
        parts.append(f"{c.instructions:,} instr")
    if c.ms is not None:
        parts.append(f"≈ {c.ms:.3f} ms")
    if c.sqnr_db is not None:
        parts.append(f"SQNR {c.sqnr_db:.1f} dB")
    tag = f"  ({match} match)" if match not in ("", REFERENCE, "exact", "unmatched") else ""
    return f"    [{i + 1}] " + "  ".join(p for p in parts if p) + tag


def _row_lines(r: RowView) -> list[str]:
    src = _where(r.source)
    out = [f"  {r.change.upper():8} {r.label}{src}"]
    for i, c in enumerate(r.cells):
        out.append(_cell_line(i, c, r.match[i] if r.match else ""))
    for i, ch in enumerate(r.changes):
        if ch and r.change == "changed":
            out += _wrap(f"[{i + 1}] vs [1]: " + "; ".join(ch), "        ")
    return out


def comparison_text(c: Comparison, *, all_rows: bool = False) -> str:
    lines = [f"Compare {len(c.sides)} sides; ops matched by the op the user wrote (module path + source line + "
             "op at quantisation time), never by node names:"]
    lines += _side_lines(c)
    for n in c.notes:
        lines += _wrap("note: " + n, "  ")
    for d in c.deltas:
        lines.append("")
        lines += _summary(c, d)
    shown = [r for r in c.rows if all_rows or r.change != "same"]
    lines.append("")
    hidden = len(c.rows) - len(shown)
    lines.append(f"Per op: {len(c.rows)} ops, {sum(r.change != 'same' for r in c.rows)} differ"
                 + (f" ({hidden} unchanged not shown: --all-rows)" if hidden else ""))
    for r in shown:
        lines += _row_lines(r)
    return "\n".join(lines)
