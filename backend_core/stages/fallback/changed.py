"""What --keep-going changed in a lowering, said the same way by the CLI, the HTML report and the
window: a lowering with quarantined ops or a workaround applied is not plain ExecuTorch's."""
from __future__ import annotations

from typing import Any


def keep_going_summary(verdicts: dict[str, Any] | None) -> str:
    """What --keep-going changed, in one sentence for the CLI, the HTML report and the window;
    "" when the lowering is plain ExecuTorch's."""
    v = verdicts or {}
    quarantined, rewrites = v.get("quarantined") or {}, v.get("rewrites") or {}
    if not quarantined and not rewrites:
        return ""
    parts = []
    edits = []
    for name, rec in rewrites.items():
        if rec.get("via") == "pre-flight":
            why = f"the pre-flight found {len(rec.get('nodes') or [])} op(s) that would fail or give wrong values on the target"
        else:
            src = (rec.get("producer") or {}).get("source")
            if name == "drop_noop_alias":
                why = f"{rec.get('stage')} failed" + (f"; the view at {src}" if src else "")
            else:           # the op the diagnosis named (a computed weight: the line computing it)
                at = rec.get("source") or src
                why = f"{rec.get('stage')} failed" + (f"; {rec.get('op') or 'the op'} at {at}" if at else "")
        edits.append(f"{name} on {rec.get('on') or 'a copy of the export'} ({why})")
    if edits:
        parts.append("value-preserving workarounds applied: " + ", ".join(edits))
    if quarantined:
        parts.append(f"{len(quarantined)} op(s) or module(s) taken out of quantisation after an ExecuTorch pass "
                     f"failed on them or the pre-flight found the target would abort on them "
                     f"({', '.join(quarantined)}; pass_failure fallbacks)")
    failed = a_pass_failed(v)
    plain = ("plain ExecuTorch fails on this model" if failed
             else "plain ExecuTorch's program would abort or give wrong values on the target")
    return "--keep-going: " + "; ".join(parts) + f". This lowering is NOT what plain ExecuTorch produces: {plain}."


def a_pass_failed(verdicts: dict[str, Any] | None) -> bool:
    """True when --keep-going got past an ExecuTorch pass that failed (not only pre-flight findings): plain
    ExecuTorch fails on this model, so `cmlens repro` has a failure to reduce."""
    v = verdicts or {}
    return (any(q.get("stage") != "pre-flight" for q in (v.get("quarantined") or {}).values())
            or any(r.get("via") != "pre-flight" for r in (v.get("rewrites") or {}).values()))
