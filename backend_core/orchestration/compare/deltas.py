"""Summary deltas of every side against side 0: fallbacks added / removed (each with its reason and
the user's line), ops added / removed, qparams changed beyond the tolerance, memory (planned arena,
method allocator, .pte = flash), instructions (total, per fallback island), SQNR at the output and
accuracy on labelled data (top-1 of the lowered program, in points)."""
from __future__ import annotations

from typing import Any

from backend_core.orchestration.compare.facts import FALLBACK, SideFacts
from backend_core.orchestration.compare.matching import NOT_VISIBLE
from backend_core.orchestration.compare.rows import Cell, RowView

# (key in SideFacts.memory, what it is)
MEMORY_METRICS = (
    ("arena_bytes", "planned arena"),                      # all memory ids, CMSIS-NN scratch included
    ("method_allocator_used", "method allocator used"),    # the arena + what Method::load allocates
    ("pte_bytes", ".pte (flash)"),
    ("constant_bytes", "constants in the .pte"),           # weights, biases, requant tables, LUTs
    ("scratch_bytes_max", "largest CMSIS-NN scratch"),
    ("peak_bytes", "peak planned bytes alive at one op"),
)


def delta(base: float | None, value: float | None) -> dict[str, Any]:
    """{base, value, delta, pct}; pct None when the base is 0 or a value is missing."""
    if base is None or value is None:
        return {"base": base, "value": value, "delta": None, "pct": None}
    d = value - base
    return {"base": base, "value": value, "delta": d, "pct": (d / base * 100.0) if base else None}


def _fb(row: RowView, c: Cell) -> dict[str, Any]:
    return {"row": row.index, "label": row.label, "op": row.op, "module": row.module,
            "source": c.source or row.source, "category": c.category, "reason": c.reason,
            "suggestion": c.suggestion, "nodes": list(c.nodes), "ops": list(c.ops), "match": c.match}


def _op(row: RowView, c: Cell) -> dict[str, Any]:
    return {"row": row.index, "label": row.label, "source": c.source or row.source, "status": c.status,
            "ops": list(c.ops), "match": c.match}


def _islands(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[dict[str, Any]]:
    ia = {i["key"]: i for i in (a or {}).get("islands", [])}
    ib = {i["key"]: i for i in (b or {}).get("islands", [])}
    out = []
    for k in list(ia) + [k for k in ib if k not in ia]:
        x, y = ia.get(k), ib.get(k)
        named = x or y
        assert named is not None                # k is a key of one of them
        out.append({"key": k, "name": named["name"], **delta(x["count"] if x else None, y["count"] if y else None),
                    "ms": delta((x or {}).get("ms"), (y or {}).get("ms"))})
    return out


def side_delta(rows: list[RowView], base: SideFacts, side: SideFacts, s: int) -> dict[str, Any]:
    """Side `s` against side 0."""
    added, removed, recat, ops_added, ops_removed, qp = [], [], [], [], [], []
    for r in rows:
        a, b = r.cells[0], r.cells[s]
        if a is None and b is None:
            continue
        if b is not None and b.status == FALLBACK and (a is None or a.status != FALLBACK):
            if a is not None or r.match[0] != NOT_VISIBLE:
                added.append(_fb(r, b))
        if a is not None and a.status == FALLBACK and (b is None or b.status != FALLBACK):
            if b is not None or r.match[s] != NOT_VISIBLE:
                removed.append(_fb(r, a))
        if a is not None and b is not None and a.status == b.status == FALLBACK and a.category != b.category:
            recat.append({**_fb(r, b), "base_category": a.category, "base_reason": a.reason})
        if a is None and b is not None and r.match[0] != NOT_VISIBLE:
            ops_added.append(_op(r, b))
        if b is None and a is not None and r.match[s] != NOT_VISIBLE:
            ops_removed.append(_op(r, a))
        if a is not None and b is not None:
            q = [c for c in r.changes[s] if c.startswith("qparams: ")]
            if q:
                qp.append({"row": r.index, "label": r.label, "source": r.source, "differences": q[0][9:]})
    mem = None
    if base.memory or side.memory:
        bm, sm = base.memory or {}, side.memory or {}
        mem = {k: {**delta(bm.get(k), sm.get(k)), "what": what} for k, what in MEMORY_METRICS}
    instr = None
    if base.profile or side.profile:
        bp, sp = base.profile or {}, side.profile or {}
        instr = {"unit": sp.get("unit") or bp.get("unit"), "total": delta(bp.get("total"), sp.get("total")),
                 "ops_total": delta(bp.get("ops_total"), sp.get("ops_total")),
                 "ms": delta(bp.get("ms"), sp.get("ms")), "estimate": sp.get("estimate") or bp.get("estimate"),
                 "islands": _islands(base.profile, side.profile)}
    sqnr = None
    if base.numerics or side.numerics:
        sqnr = {"output_sqnr_db": {**delta((base.numerics or {}).get("output_sqnr_db"),
                                           (side.numerics or {}).get("output_sqnr_db")), "pct": None},  # dB: no %
                "inputs": (side.numerics or base.numerics or {}).get("inputs", "")}
    return {"side": s, "against": 0, "fallbacks_added": added, "fallbacks_removed": removed,
            "fallbacks_recategorised": recat, "ops_added": ops_added, "ops_removed": ops_removed,
            "qparams_changed": qp, "fallback_count": delta(len(base.fallback_groups()), len(side.fallback_groups())),
            "memory": mem, "instructions": instr, "sqnr": sqnr, "accuracy": accuracy_delta(base.accuracy, side.accuracy)}


def _pct(acc: dict[str, Any] | None, model: str, metric: str) -> float | None:
    v = ((acc or {}).get("models") or {}).get(model, {}).get(metric)
    return None if v is None else round(100.0 * v, 4)


def accuracy_delta(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    """Top-1 (%) of the lowered program and of float, agreement with float (%), flips and the lowered output's
    SQNR against float (dB), side against side 0;
    deltas in points (pct None: a relative change of a percentage says nothing). `same_data` is False when
    the two were evaluated on other data or sample counts: then the delta is no regression measure."""
    if not a and not b:
        return None
    same = bool(a and b and a.get("data") == b.get("data") and a.get("samples") == b.get("samples"))
    return {"top1": {**delta(_pct(a, "lowered", "top1"), _pct(b, "lowered", "top1")), "pct": None},
            "float_top1": {**delta(_pct(a, "float", "top1"), _pct(b, "float", "top1")), "pct": None},
            "agreement": {**delta(_pct(a, "lowered", "agreement"), _pct(b, "lowered", "agreement")), "pct": None},
            "flips": {**delta((a or {}).get("flips"), (b or {}).get("flips")), "pct": None},
            "output_sqnr_db": {**delta((a or {}).get("output_sqnr_db"), (b or {}).get("output_sqnr_db")), "pct": None},
            "samples": (b or a or {}).get("samples"), "data": (b or a or {}).get("data", ""), "same_data": same,
            "by_layer": (b or {}).get("by_layer", [])}


def all_deltas(rows: list[RowView], sides: list[SideFacts]) -> list[dict[str, Any]]:
    return [side_delta(rows, sides[0], sides[s], s) for s in range(1, len(sides))]
