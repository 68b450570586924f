"""The HTML report's profile section (a run with --profile, the job's `run` step): the cycle estimate's
headline, the values it used and what it leaves out, then the costliest ops and the fallback islands with
their instructions and estimated milliseconds. Plain tables, no script, like the rest of the summary."""
from __future__ import annotations

import html
from typing import Any

TOP = 15


def _e(x: Any) -> str:
    return html.escape(str(x))


def _n(x: Any) -> str:
    return "–" if x is None else f"{x:,}"


def _ms(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def _short(op: str) -> str:
    return op.replace("cortex_m.", "").replace(".default", "")


def run_headline_html(run: dict[str, Any]) -> str:
    """One paragraph for the top of the page: where it ran, the outcome, the estimate's headline."""
    ok = run.get("outcome") in ("PASS", "RAN")
    e = (run.get("profile") or {}).get("estimate") or {}
    est = (f"<br><b>Cycle estimate (kernels): {_e(e['headline'])}</b> (<a href='#profile'>per op and per "
           f"fallback island below</a>)") if e.get("headline") else ""
    return (f"<p class='estimate'>Run on {_e(run.get('board'))} ({_e(run.get('simulator'))}): "
            f"<span class='{'ok' if ok else 'fb'}'>{_e(run.get('outcome'))}</span>{est}</p>")


def estimate_html(e: dict[str, Any]) -> str:
    """Headline (≈ cycles ≈ ms @ clock on board, ±error), the values used, the sources of error, notes."""
    low = e.get("low_confidence")
    parts = [f"<p class='estimate{' fb' if low else ''}'><b>Cycle estimate (kernels): {_e(e.get('headline', ''))}</b></p>",
             f"<p>Used: {_e(e.get('used', ''))}.</p>"]
    if e.get("confidence"):
        parts.append(f"<p class='{'fb' if low else 'dim'}'>Instructions of classes the {_e(e.get('core'))} table "
                     f"has no figure for: {_e(e['confidence'])} (counted at one cycle each"
                     f"{'; above 5 %: low confidence' if low else ''}).</p>")
    srcs = e.get("sources_of_error") or []
    if srcs:
        parts.append("<p>An estimate, not a measurement; its known sources of error: " + "; ".join(_e(s) for s in srcs) + ".</p>")
    parts += [f"<p class='dim'>Note: {_e(n)}</p>" for n in e.get("notes") or []]
    return "\n".join(parts)


def profile_html(prof: dict[str, Any], problem: str = "") -> str:
    """The section for a run's `profile` (backend_core.target.profile.model.Profile.to_dict())."""
    if not prof:
        return f"<h2 id='profile'>Per-op profile</h2><p class='dim'>No profile ({_e(problem or 'run without --profile')}).</p>"
    unit = prof.get("unit") or "ticks"
    label = (prof.get("unit_info") or {}).get("label", "")
    e = prof.get("estimate")
    if e and "headline" not in e:                   # a run's JSON written before the estimate carried its words
        from backend_core.target.profile.milliseconds import estimate_summary

        e = estimate_summary(e)
    total = prof.get("total")
    parts = [f"<h2 id='profile'>Per-op profile on {_e(prof.get('target'))}: {_n(total)} {_e(unit)} per inference</h2>",
             f"<p class='dim'>{_e(label)}; shares are of the kernels ({_n(prof.get('ops_total'))} {_e(unit)}).</p>"]
    parts.append(estimate_html(e) if e else "<p class='dim'>No cycle estimate (no instruction classes or no timing "
                 "table for this core): instructions only.</p>")
    ops = sorted(prof.get("ops") or [], key=lambda o: o.get("count") or 0, reverse=True)
    with_ms = bool(e) and any(o.get("ms") is not None for o in ops)
    parts.append(f"<h3>Top {min(TOP, len(ops))} of {len(ops)} ops</h3><table><tr><th>node</th><th>op</th>"
                 f"<th>{_e(unit)}</th><th>share</th><th>MACs</th>" + ("<th>≈ ms</th>" if with_ms else "") + "</tr>")
    for o in ops[:TOP]:
        cls = " class='fb'" if o.get("kind") == "portable_fallback" else ""
        parts.append(f"<tr><td{cls}>{_e(o.get('node') or '?')}</td><td>{_e(_short(o.get('op', '')))}</td>"
                     f"<td>{_n(o.get('count'))}</td><td class='num'>{100 * (o.get('share') or 0):.1f} %</td>"
                     f"<td>{_n(o.get('macs'))}</td>" + (f"<td>{_ms(o.get('ms'))}</td>" if with_ms else "") + "</tr>")
    parts.append("</table>")
    islands = prof.get("islands") or []
    if islands:
        parts.append(f"<h3>Fallback islands: {len(islands)}</h3><table><tr><th>island</th><th>{_e(unit)}</th>"
                     "<th>share</th>" + ("<th>≈ ms</th>" if with_ms else "") + "<th>vs the CMSIS-NN kernels around it"
                     "</th><th>nodes</th></tr>")
        for i in islands:
            ratio = "–" if i.get("ratio") is None else f"{i['ratio']:.2g}×"
            parts.append(f"<tr><td class='fb'>{_e(i.get('name'))}</td><td>{_n(i.get('count'))}</td>"
                         f"<td class='num'>{100 * (i.get('share') or 0):.1f} %</td>" + (f"<td>{_ms(i.get('ms'))}</td>" if with_ms
                                                                              else "")
                         + f"<td>{ratio}</td><td>{_e(', '.join(i.get('nodes') or []))}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p class='ok'>No fallback island: no portable fallback in the final graph.</p>")
    return "\n".join(parts)
