"""Text table and CSV of a NumericsResult (pure Python: the GUI and the CLI share them)."""
from __future__ import annotations

import csv
import io
from typing import Any

from backend_core.analyses.numerics.results import (PAIR_FQ_VS_FLOAT, PAIR_LOCAL, PAIR_LOWERED_VS_FLOAT, PAIR_LOWERED_VS_FQ,
                      Metrics, NumericsResult)

CSV_COLUMNS = ["rank", "index", "node_id", "target", "kind", "module_path", "debug_handle",
               "reference", "scale", "zero_point"]
_METRIC_FIELDS = ["sqnr_db", "cosine", "max_abs", "mean_abs", "max_lsb", "mean_lsb", "identical"]
_PAIR_PREFIX = {PAIR_LOCAL: "local", PAIR_LOWERED_VS_FQ: "lowered_vs_fq",
                PAIR_LOWERED_VS_FLOAT: "lowered_vs_float", PAIR_FQ_VS_FLOAT: "fq_vs_float"}


def _f(v: Any, fmt: str = "{:.2f}") -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return fmt.format(v)


def _sq(m: Metrics | None) -> str:
    if m is None:
        return "-"
    return "  exact" if m.identical else f"{m.sqnr_db:7.2f}"


def layer_table(result: NumericsResult, limit: int | None = None, sort: str = PAIR_LOCAL) -> str:
    """Worst layers first (by `sort`), one line each."""
    rows = result.worst(limit, pair=sort)
    head = (f"{'#':>3} {'layer (final graph node)':<52} {'op':<28} {'local':>7} {'vs FQ':>7} "
            f"{'vs float':>8} {'FQ-float':>8} {'cos':>7} {'max LSB':>7} {'mean abs':>9}")
    lines = [head, "-" * len(head)]
    for rank, lr in enumerate(rows, 1):
        op = lr.target.replace("cortex_m.", "").replace(".default", "")
        name = lr.node_id if len(lr.node_id) <= 52 else lr.node_id[:51] + "…"
        m = lr.vs_fake_quant
        lines.append(
            f"{rank:>3} {name:<52} {op[:28]:<28} {_sq(lr.local):>7} {_sq(lr.vs_fake_quant):>7} "
            f"{_sq(lr.vs_float):>8} {_sq(lr.fake_quant_vs_float):>8} "
            f"{_f(lr.vs_float.cosine if lr.vs_float else None, '{:.4f}'):>7} "
            f"{_f(m.max_lsb if m else None, '{:.0f}'):>7} "
            f"{_f(lr.vs_float.mean_abs if lr.vs_float else None, '{:.3g}'):>9}"
            + ("  (derived)" if lr.reference == "derived" else ""))
    return "\n".join(lines)


def outputs_table(result: NumericsResult) -> str:
    lines = []
    for o in result.outputs:
        lines.append(f"output {o.index} {tuple(o.shape) if o.shape else ''}:")
        for label, m in (("lowered vs fake-quant", o.vs_fake_quant),
                         ("lowered vs float     ", o.vs_float),
                         ("fake-quant vs float  ", o.fake_quant_vs_float)):
            if m is None:
                continue
            sq = "exact" if m.identical else f"{m.sqnr_db:.2f} dB"
            lines.append(f"  {label}  SQNR {sq:>9}  cos {m.cosine:.5f}  "
                         f"max abs {m.max_abs:.4g}  mean abs {m.mean_abs:.4g}")
        if o.top1_vs_float is not None:
            lines.append(f"  top-1 agreement: lowered/float {o.top1_vs_float:.0%}, lowered/fake-quant "
                         f"{o.top1_vs_fake_quant:.0%}, fake-quant/float {o.top1_fake_quant_vs_float:.0%}")
    return "\n".join(lines)


def stages_table(result: NumericsResult) -> str:
    return "\n".join("  " + s.summary() for s in result.stages
                     if s.status not in ("not_runnable",))


def summary_text(result: NumericsResult, limit: int | None = 15, sort: str = PAIR_LOCAL) -> str:
    parts = [
        f"Numerics: {result.model} ({result.target}, {result.flow} flow), {result.n_inputs} "
        f"sample(s): {result.inputs}",
        "SQNR in dB (higher is better; 'exact' = bit-identical). local = this layer's lowered kernel "
        "on the fake-quant inputs vs fake-quant; vs FQ / vs float = cumulative.",
        "",
        layer_table(result, limit, sort),
    ]
    if limit and len(result.layers) > limit:
        parts.append(f"… {len(result.layers) - limit} more layers (--csv has all)")
    parts += ["", "Model outputs:", outputs_table(result), "", "Passes:", stages_table(result)]
    if result.notes:
        parts += [""] + [f"note: {n}" for n in result.notes]
    parts.append(f"\nanalysis {result.seconds:.1f} s, lowering {result.lowering_seconds:.1f} s")
    return "\n".join(parts)


def to_csv(result: NumericsResult, sort: str = PAIR_LOCAL) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    cols = CSV_COLUMNS + [f"{_PAIR_PREFIX[p]}_{f}" for p in _PAIR_PREFIX for f in _METRIC_FIELDS]
    w.writerow(cols)
    for rank, lr in enumerate(result.worst(pair=sort), 1):
        row: list[Any] = [rank, lr.index, lr.node_id, lr.target, lr.kind, lr.module_path,
                          lr.debug_handle, lr.reference, lr.scale, lr.zero_point]
        for p in _PAIR_PREFIX:
            m = lr.metric(p)
            row += [getattr(m, f) if m else "" for f in _METRIC_FIELDS]
        w.writerow(["" if v is None else v for v in row])
    return buf.getvalue()
