"""Quantisation parameters of a group, in a compact comparable form, and their comparison with a
stated tolerance.

A lowering is not byte-identical across machines: calibration runs float kernels whose rounding
depends on the CPU's vector units, so a scale can differ in its last bits, and the zero point derived
from it (round(qmin - min / scale)) can move by one when the division lands next to .5. Neither is a
change the user made, so neither is reported: scales are equal within a relative tolerance
(`DEFAULT_RTOL`), zero-point-like integers within one step. Dtypes, quantisation ranges and the
number of per-channel scales must be equal."""
from __future__ import annotations

import math
from typing import Any

from backend_core.common.snapshot.model import NodeSnapshot, QParam, Requant

# float32 carries ~7 significant digits; a scale recomputed on another CPU differs in the last one or
# two. 1e-5 is ~100 float32 ulps: well above that noise, far below any change calibration or an edit makes.
DEFAULT_RTOL = 1e-5
# Integer fields that are (offsets of) a zero point: one step of rounding noise is allowed.
ZP_FIELDS = frozenset({"zero_point", "input_offset", "output_offset", "activation_min", "activation_max"})


def _qp(q: QParam) -> dict[str, Any]:
    d: dict[str, Any] = {"dtype": q.dtype, "scale": q.scale, "zero_point": q.zero_point,
                         "qmin": q.qmin, "qmax": q.qmax}
    if q.per_channel:
        d["axis"] = q.axis
        d["scales"] = list(q.scales)
    return d


def _rq(r: Requant) -> dict[str, Any]:
    d: dict[str, Any] = {"effective_scales": list(r.effective_scales)}
    for k in ("input_offset", "output_offset", "activation_min", "activation_max"):
        v = getattr(r, k)
        if v is not None:
            d[k] = v
    return d


def qparams_of(node: NodeSnapshot) -> dict[str, Any]:
    """`output`, `inputs` {arg index: ...} and, for cortex_m kernels, `requant` (effective scales,
    not the integer multipliers: a multiplier is the same number at another shift)."""
    out: dict[str, Any] = {}
    if node.output_qparams is not None:
        out["output"] = _qp(node.output_qparams)
    if node.input_qparams:
        out["inputs"] = {str(i): _qp(q) for i, q in node.input_qparams if q is not None}
    if node.requant is not None:
        out["requant"] = _rq(node.requant)
    return out


def _close(a: float, b: float, rtol: float) -> bool:
    if a == b:
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def qparam_differences(a: dict[str, Any], b: dict[str, Any], rtol: float = DEFAULT_RTOL,
                       path: str = "") -> list[str]:
    """What differs beyond the tolerance, one short line each (empty: the same). Only fields both
    sides carry are compared: a `.pte` read back has requantisation but no output qparams on a
    kernel, and that is not a difference."""
    diffs: list[str] = []
    for k in sorted(set(a) & set(b)):
        va, vb = a[k], b[k]
        where = f"{path}.{k}" if path else k
        if isinstance(va, dict) and isinstance(vb, dict):
            diffs.extend(qparam_differences(va, vb, rtol, where))
        elif isinstance(va, list) and isinstance(vb, list):
            if len(va) != len(vb):
                diffs.append(f"{where}: {len(va)} -> {len(vb)} values")
                continue
            bad = [i for i, (x, y) in enumerate(zip(va, vb)) if not _close(float(x), float(y), rtol)]
            if bad:
                i = bad[0]
                diffs.append(f"{where}: {len(bad)} of {len(va)} differ (e.g. [{i}] {va[i]:.6g} -> {vb[i]:.6g})")
        elif isinstance(va, bool) or isinstance(vb, bool) or isinstance(va, str) or isinstance(vb, str):
            if va != vb:
                diffs.append(f"{where}: {va} -> {vb}")
        elif isinstance(va, int) and isinstance(vb, int):
            if va != vb and not (k in ZP_FIELDS and abs(va - vb) <= 1):
                diffs.append(f"{where}: {va} -> {vb}")
        elif isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            if not _close(float(va), float(vb), rtol):
                diffs.append(f"{where}: {va:.6g} -> {vb:.6g} ({(vb - va) / va * 100 if va else math.inf:+.3g} %)")
        elif va != vb:
            diffs.append(f"{where}: {va} -> {vb}")
    return diffs


def qparams_summary(q: dict[str, Any]) -> str:
    """One short line: the output's dtype, scale and zero point (or the requantisation's)."""
    o = q.get("output")
    if o:
        return f"{o['dtype']} s={o['scale']:.4g} zp={o['zero_point']}"
    r = q.get("requant")
    if r and r.get("effective_scales"):
        s = r["effective_scales"]
        rng = f"{s[0]:.4g}" if len(s) == 1 else f"[{min(s):.3g}..{max(s):.3g}]"
        return f"requant {rng}" + (f" out_off={r['output_offset']}" if "output_offset" in r else "")
    i = q.get("inputs")
    if i:
        first = i[sorted(i)[0]]
        return f"in {first['dtype']} s={first['scale']:.4g} zp={first['zero_point']}"
    return ""
