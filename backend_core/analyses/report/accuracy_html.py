"""The HTML report's accuracy section (the `evaluate` step of a job, backend_core.analyses.accuracy): per model
accuracy, agreement and ST's output metrics, the confusion matrices side by side, the flips by layer.
Plain tables, no script, like the rest of the static summary."""
from __future__ import annotations

import html
from typing import Any

MODELS = (("float", "float"), ("fake_quant", "fake-quant (PT2E)"), ("lowered", "lowered (host)"))


def _e(x: Any) -> str:
    return html.escape(str(x))


def _pct(v: Any) -> str:
    return f"{100 * v:.2f} %" if isinstance(v, (int, float)) else "–"


def _f(v: Any, fmt: str = ".4f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) else "–"


def accuracy_html(ev: dict[str, Any]) -> str:
    parts = [f"<h2>Accuracy: {_e(ev['samples'])} samples ({_e(ev['task'])})</h2>",
             f"<p>{_e(ev['data'])}; {_e(ev['model'])} on {_e(ev['target'])}, {_e(ev['flow'])} flow.</p>"]
    for w in ev.get("warnings", []):
        parts.append(f"<p class='fb'>warning: {_e(w)}</p>")
    out0 = (ev.get("outputs") or [{}])[0]
    errs = {"float": {}, "fake_quant": out0.get("fake_quant_vs_float") or {},
            "lowered": out0.get("lowered_vs_float") or {}}
    parts.append("<table><tr><th>model</th><th>top-1</th><th>top-5</th><th>agreement with float</th><th>RMSE</th>"
                 "<th>MAE</th><th>L2 relative</th><th>cosine</th><th>samples/s</th></tr>")
    for key, label in MODELS:
        m, e = ev["models"].get(key, {}), errs[key]
        parts.append(f"<tr><td>{_e(label)}</td><td>{_pct(m.get('top1'))}</td><td>{_pct(m.get('top5'))}</td>"
                     f"<td>{_pct(m.get('agreement'))}</td><td>{_f(e.get('rmse'))}</td><td>{_f(e.get('mae'))}</td>"
                     f"<td>{_f(e.get('l2_relative'))}</td><td>{_f(e.get('cosine'))}</td>"
                     f"<td>{_f(ev['speed'][key]['samples_per_s'], '.1f')}</td></tr>")
    tm, tr = ev["models"].get("target"), ev.get("target_run") or {}
    if tm:                                   # the first K samples on the board (jobs/target_run/evaluate.py)
        parts.append(f"<tr><td>target (first {tm['n']} samples)</td><td>{_pct(tm.get('top1'))}</td><td>–</td>"
                     f"<td>{_pct(tm.get('agreement'))}</td><td colspan=5>lowered on the same samples: "
                     f"{_pct(tm.get('lowered_top1_same_samples'))}</td></tr>")
    parts.append("</table><p><small>RMSE, MAE, L2 relative error and cosine of output 0 against float (ST Edge AI's "
                 "validate metrics).</small></p>")
    if tr.get("summary"):
        cls = "ok" if tr.get("bit_exact") == tr.get("k") else "fb"
        parts.append(f"<p class='{cls}'><b>Target:</b> {_e(tr['summary'])}</p>")
    if ev["task"] == "classification":
        classes = ev.get("classes")
        parts.append("<div style='display:flex;gap:2em;flex-wrap:wrap'>")
        for key, label in MODELS:
            conf = ev["models"][key]["confusion"]
            names = [classes[i] if classes and i < len(classes) else str(i) for i in range(len(conf))]
            rows = "".join(f"<tr><th>{_e(names[i])}</th>" + "".join(
                f"<td{' class=ok' if i == j and v else (' class=fb' if v else '')}>{v or ''}</td>"
                for j, v in enumerate(r)) + "</tr>" for i, r in enumerate(conf))
            head = "".join(f"<th>{_e(n)}</th>" for n in names)
            parts.append(f"<div><h3>{_e(label)}</h3><table><tr><th>true \\ predicted</th>{head}</tr>{rows}</table></div>")
        parts.append("</div>")
    fl = ev.get("flips")
    if fl is not None:
        parts.append(f"<h3>Flips: {len(ev.get('flipped', []))} prediction(s) of the lowered program differ from float</h3>")
        if fl.get("by_layer"):
            parts.append("<table><tr><th>flips</th><th>first departing layer</th><th>source</th><th>SQNR on those "
                         "samples</th><th>median SQNR</th><th>samples</th></tr>")
            for g in fl["by_layer"]:
                parts.append(f"<tr><td>{g['flips']}</td><td>{_e(g.get('label'))}</td><td>{_e(g.get('source') or '')}</td>"
                             f"<td>{_f(g.get('sqnr_db'), '.1f')} dB</td><td>{_f(g.get('median_sqnr_db'), '.1f')} dB</td>"
                             f"<td>{_e(', '.join(g['samples'][:12]))}{' …' if len(g['samples']) > 12 else ''}</td></tr>")
            parts.append(f"</table><p><small>A layer departs when a flipped sample's SQNR (lowered vs float) there is "
                         f"more than {_f(fl.get('threshold_db'), 'g')} dB below its median over "
                         f"{len(fl.get('reference_samples', []))} samples that did not flip.</small></p>")
    return "\n".join(parts)
