"""A Profile as fixed-width text for the CLI: top ops, kernel kinds, fallback islands."""
from __future__ import annotations

from backend_core.target.profile.milliseconds import estimate_headline, island_ms, op_ms, sources_of_error, used_text
from backend_core.target.profile.model import Profile

__all__ = ["class_totals", "estimate_headline", "profile_table"]


def _n(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def _short(target: str) -> str:
    return target.replace("cortex_m.", "").replace(".default", "")


def class_totals(p: Profile) -> dict[str, int]:
    """Instructions by class over the profile's kernels ({} without a QEMU block log)."""
    out: dict[str, int] = {}
    for o in p.ops:
        for k, v in (o.classes or {}).items():
            out[k] = out.get(k, 0) + v
    return out


def _class_rows(p: Profile) -> list[str]:
    tot = class_totals(p)
    n = sum(tot.values())
    if not n:
        return []
    parts = [f"{k.replace('_', ' ')} {v / n:.1%}" for k, v in sorted(tot.items(), key=lambda kv: -kv[1]) if v]
    return [f"  kernels' instructions by class ({n:,}, QEMU block log + ELF disassembly): " + ", ".join(parts)]


def _estimate_rows(e: dict | None) -> list[str]:
    if not e:
        return []
    rows = [f"  cycle estimate (kernels): {estimate_headline(e)}", f"    used: {used_text(e)}"]
    if sources_of_error(e):
        rows.append("    an estimate, not a measurement: " + "; ".join(sources_of_error(e)))
    rows += [f"    note: {n}" for n in e.get("notes", [])]
    return rows


def profile_table(p: Profile, top: int = 10) -> str:
    """What `cmlens run --profile` prints."""
    u = p.unit
    head = [f"per-op profile of {p.model or 'the model'} on {p.target or '?'}: {_n(p.total)} {u.name} per "
            f"inference ({u.label}{'; ' + u.source if u.source else ''})"]
    if p.total:
        over = p.overhead or 0
        head.append(f"  kernels {_n(p.ops_total)} ({p.ops_total / p.total:.1%} of Method::execute), dispatch loop + "
                    f"ETDump event recording {_n(over)} ({over / p.total:.1%}; recording one event costs "
                    f"~{_n(p.recording_per_event)}, 2 per instruction: gone without a profiler); shares below "
                    f"are of the kernels")
    if p.deterministic is not None:
        head.append(f"  {len(p.inference_totals)} inferences: "
                    + ("identical counts" if p.deterministic else "counts differ: " +
                       ", ".join(_n(t) for t in p.inference_totals)))
    w = min(max([len(o.node or "?") for o in p.ops] + [20]), 64)    # full node ids: they are what to select
    ms = op_ms(p)
    ms_of = {id(o): m for o, m in zip(p.ops, ms)}
    rows = [f"  top {min(top, len(p.ops))} ops:",
            f"  {'node':{w}} {'op':28} {u.name:>12} {'share':>6} {'MACs':>10} {u.name[:5] + '/MAC':>10} "
            f"{'bytes':>8}" + (f" {'≈ ms':>8}" if ms else "")]
    for o in p.top(top):
        per = "-" if o.per_mac is None else f"{o.per_mac:.2f}"
        rows.append(f"  {(o.node or '?')[:w]:{w}} {_short(o.op)[:28]:28} {o.count:12,} {o.share:6.1%} "
                    f"{_n(o.macs):>10} {per:>10} {_n(o.bytes_moved):>8}" + (f" {ms_of[id(o)]:8.3f}" if ms else ""))
    rows.append("  by kernel kind: " + ", ".join(f"{g.name} {g.share:.1%}" for g in p.by_kind))
    rows += _class_rows(p)
    rows += _estimate_rows(p.estimate)
    if p.islands:
        rows.append(f"  fallback islands ({len(p.islands)}):")
        for i in p.islands:
            around = ""
            if i.ratio is not None:
                around = (f", {i.ratio:.2g}x the {u.name} of the {len(i.neighbours)} CMSIS-NN kernel(s) "
                          f"around it ({', '.join(i.neighbours)})")
            est = ""
            if ms:
                est = f" (≈ {island_ms(p, i, ms):.3f} ms estimated)"
            rows.append(f"    {i.name}: {_n(i.count)} {u.name}{est}, {i.share:.1%} of the inference's kernels{around}; "
                        f"nodes {', '.join(i.nodes)}")
    else:
        rows.append("  fallback islands: none (no portable fallback in the final graph)")
    if p.no_instruction:
        rows.append(f"  ran no instruction (memory-planned views): {', '.join(p.no_instruction)}")
    rows += [f"  note: {t}" for t in p.notes]
    return "\n".join(head + rows)
