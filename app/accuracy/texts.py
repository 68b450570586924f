"""The Accuracy tab's sentences: the top-1 headline, the title, the flips' header and one flip's row. Plain
functions of the evaluate step's JSON (no widgets), so the panel only lays them out."""
from __future__ import annotations

import html
from typing import Any

from app.accuracy.charts import MODEL_LABELS, models_in


def headline(ev: dict[str, Any]) -> str:
    """"float 97.33 %, fake-quant 97.33 %, lowered 97.33 %; 0 flips of 450"."""
    parts = []
    for k in models_in(ev):
        v = ev["models"][k].get("top1")
        if isinstance(v, (int, float)):
            n = ev["models"][k].get("n") if k == "target" else None
            parts.append(f"{MODEL_LABELS[k]} {100 * v:.2f} %" + (f" (first {n} samples)" if n else ""))
    flips = len(ev.get("flipped", []))
    return ", ".join(parts) + f"; {flips} flip{'s' if flips != 1 else ''} of {ev['samples']}"


def title_html(ev: dict[str, Any]) -> str:
    low = ev["models"].get("lowered", {})
    fid = low.get("agreement_with_fake_quant")
    s = (f"<b>{html.escape(str(ev['model']))}</b> → {html.escape(str(ev['target']))}: {ev['samples']} samples of "
         f"{html.escape(str(ev['data']))} · top-1 {html.escape(headline(ev))}")
    if isinstance(fid, (int, float)):
        s += f" · lowered vs fake-quant agree on {100 * fid:.2f} %"
    return s


def flip_head(ev: dict[str, Any]) -> tuple[str, str]:
    """(the flips' header, its tooltip): how many flipped, and at which layers most."""
    fl = ev.get("flips") or {}
    rows = fl.get("samples") or []
    n = len(ev.get("flipped", []))
    if not n:
        return "<b>no flips</b>: every prediction of the lowered program is float's", ""
    lines = []
    for g in fl.get("by_layer", [])[:2]:
        where = g.get("label") if g.get("layer") is None else g.get("label", g.get("layer"))
        lines.append(f"{g['flips']} at {html.escape(str(where))}")
    text = (f"<b>{n} flipped</b> of {ev['samples']}: " + "; ".join(lines)
            + (f" (first {len(rows)} traced)" if len(rows) < n else ""))
    return text, "\n".join(f"{g['flips']} flips: {g.get('label', g.get('layer'))}" for g in fl.get("by_layer", []))


def flip_row(ev: dict[str, Any], r: dict[str, Any], labels: dict[str, dict[str, Any]]) -> tuple[list[str], str]:
    """(the cells of one flipped sample's row, the layer column's tooltip)."""
    classes = ev.get("classes")

    def name(c: Any) -> str:
        return str(classes[c]) if classes and isinstance(c, int) and c < len(classes) else str(c)

    layer = labels.get(r.get("layer") or "", {})
    where = layer.get("label") or ("no layer departs (near tie in float)" if not r.get("layer") else r["layer"])
    cells = [str(r["sample"]), "" if r.get("label") is None else name(r["label"]),
             f"{name(r['float'])} → {name(r['lowered'])}", where,
             "" if r.get("layer_sqnr_db") is None else f"{r['layer_sqnr_db']:.1f} dB",
             "" if r.get("median_sqnr_db") is None else f"{r['median_sqnr_db']:.1f} dB"]
    return cells, f"{where}\n{layer.get('code', '')}".strip()
