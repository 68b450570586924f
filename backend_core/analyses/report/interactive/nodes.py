"""What the browser's inspector shows for one node, as a small plain record.

The lowering JSON carries every per-channel scale and every argument of every stage (ds_cnn: 1.9 MB);
the page needs only what a person reads, so qparams and requantisation become one line of text each
here (as the app's inspector words them) and the page stays a few hundred KB.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.common.snapshot.model import KIND_LABELS


def qparam_text(q: dict[str, Any] | None) -> str:
    """One tensor's quantisation in words: dtype, zero point, range, scale (or the per-channel spread)."""
    if not q:
        return ""
    base = f"{q.get('dtype')} zp={q.get('zero_point')} range=[{q.get('qmin')}, {q.get('qmax')}]"
    scales = q.get("scales") or []
    if q.get("per_channel") and scales:
        text = (f"{base}, per-channel axis={q.get('axis')}: {len(scales)} scales in "
                f"[{min(scales):.4g}, {max(scales):.4g}], mean {q.get('scale', 0):.4g}")
    elif q.get("per_channel"):
        text = f"{base}, per-channel axis={q.get('axis')}, mean scale {q.get('scale', 0):.4g}"
    else:
        text = f"{base}, scale={q.get('scale', 0):.6g}"
    return text + (f" ({q['source']})" if q.get("source") else "")


def requant_text(r: dict[str, Any] | None) -> str:
    """A cortex_m kernel's fixed-point requantisation: offsets, clamp, the effective scale(s)."""
    if not r:
        return ""
    eff = r.get("effective_scales") or []
    parts = []
    if r.get("input_offset") is not None:
        parts.append(f"input_offset={r['input_offset']}")
    if r.get("output_offset") is not None:
        parts.append(f"output_offset={r['output_offset']}")
    if r.get("activation_min") is not None:
        parts.append(f"clamp=[{r['activation_min']}, {r['activation_max']}]")
    if len(eff) == 1:
        parts.append(f"effective scale {eff[0]:.6g}")
    elif eff:
        parts.append(f"{len(eff)} effective scales in [{min(eff):.4g}, {max(eff):.4g}]")
    return ", ".join(parts)


def tensor_text(dtype: str | None, shape: list[int] | None) -> str:
    s = "" if shape is None else "[" + ",".join(str(d) for d in shape) + "]"
    return f"{dtype or '?'}{s}" if (dtype or s) else ""


def _clip(s: str, n: int = 160) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def node_record(n: dict[str, Any]) -> dict[str, Any]:
    """The inspector's fields of one lowering-JSON node (docs/json-format.md, `stages[].nodes[]`).
    Empty fields are left out: the page shows what is there."""
    rec: dict[str, Any] = {"id": n["id"], "op": n.get("target") or n.get("op", ""), "kind": n["kind"],
                           "fx": n.get("fx_op", "")}
    t = tensor_text(n.get("dtype"), n.get("shape"))
    if t:
        rec["t"] = t
    if n.get("module_path") or n.get("module_type"):
        rec["mod"] = [n.get("module_path", ""), n.get("module_type", "")]
    src = n.get("source")
    if src:
        rec["src"] = [Path(src["file"]).name, src["line"], src.get("function", ""), src.get("code", "")]
        if src.get("chain"):      # the calls from the user's own line down to the line that made the op
            rec["chain"] = [Path(c.split(":", 1)[0]).name + ":" + c.split(":", 1)[1] if ":" in c else c
                            for c in src["chain"]]
    if n.get("debug_handle") is not None:
        rec["dh"] = n["debug_handle"]
    if n.get("args"):
        rec["args"] = [_clip(a) for a in n["args"]]
    q_in = [[int(i), qparam_text(q)] for i, q in n.get("input_qparams") or [] if q]
    if q_in:
        rec["qin"] = q_in
    if n.get("output_qparams"):
        rec["qout"] = qparam_text(n["output_qparams"])
    if n.get("requant"):
        rec["rq"] = requant_text(n["requant"])
    if n.get("origin"):
        rec["from"] = list(n["origin"])
    if n.get("flags"):
        rec["flags"] = [[k, _clip(str(v))] for k, v in n["flags"]]
    fb = n.get("fallback")
    if fb:
        uo = fb.get("user_op") or None
        rec["fb"] = {"cat": fb.get("category", ""), "why": fb.get("message", ""),
                     "ev": list(fb.get("evidence") or []), "fix": fb.get("suggestion", ""),
                     "stage": fb.get("stage", ""), "verified": fb.get("verified", ""),
                     "verification": fb.get("verification", ""),
                     "user": [uo.get("target", ""), uo.get("name", ""), uo.get("source") or ""] if uo else None}
    return rec


def kind_labels() -> dict[str, str]:
    return dict(KIND_LABELS)
