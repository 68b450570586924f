"""Texts of the Numerics tab: the result summary line and the selected layer's metrics."""
from __future__ import annotations

from typing import Any

from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LOCAL, PAIR_LOWERED_VS_FLOAT,
                                           PAIR_LOWERED_VS_FQ, LayerResult, NumericsResult)


def fmt_metric(label: str, m: Any) -> str:
    if m is None:
        return f"{label}: –"
    sq = "exact" if m.identical else f"{m.sqnr_db:.1f} dB"
    lsb = f", max {m.max_lsb:.0f} LSB" if m.max_lsb is not None else ""
    return f"{label}: {sq} (cos {m.cosine:.4f}, max abs {m.max_abs:.3g}{lsb})"


def layer_text(lr: LayerResult) -> str:
    """Rich text: the node, its op and module, then its metrics against each reference."""
    parts = [f"<b>{lr.node_id}</b> — {lr.target}"
             + (f" — {lr.module_path}" if lr.module_path else "")
             + (" — reference derived (no debug handle)" if lr.reference == "derived" else "")]
    parts.append(" · ".join(fmt_metric(name, lr.metric(p)) for name, p in
                            (("local", PAIR_LOCAL), ("vs fake-quant", PAIR_LOWERED_VS_FQ),
                             ("vs float", PAIR_LOWERED_VS_FLOAT),
                             ("fake-quant vs float", PAIR_FQ_VS_FLOAT))))
    return "<br>".join(parts)


def summary_text(r: NumericsResult) -> str:
    """One line: model and options, output agreement, which stages changed the numbers."""
    bits = [f"{r.model} · {r.target} · {r.flow} · {r.n_inputs} sample(s) ({r.inputs})"]
    for o in r.outputs:
        m = o.vs_float
        if m is not None:
            t1 = f", top-1 agreement {o.top1_vs_float:.0%}" if o.top1_vs_float is not None else ""
            bits.append(f"output {o.index}: lowered vs float {'exact' if m.identical else f'{m.sqnr_db:.1f} dB'}{t1}")
    diverged = [s for s in r.stages if s.status == "diverged"]
    neutral = [s for s in r.stages if s.status == "neutral"]
    bits.append(f"{len(neutral)} runnable stage(s) neutral, {len(diverged)} changed the numbers"
                + (": " + "; ".join(f"{s.stage} first at {s.first_diverging}" for s in diverged)
                   if diverged else ""))
    return " — ".join(bits)
