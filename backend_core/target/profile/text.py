"""A Profile as fixed-width text for the CLI: top ops, kernel kinds, fallback islands."""
from __future__ import annotations

from backend_core.target.profile.model import Profile


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


def estimate_headline(e: dict) -> str:
    """"≈ 2.9 M cycles ≈ 7.3 ms @ 400 MHz on alif-e7, estimate: ±E % on published measurements" from a
    profile's estimate (backend_core.target.timing.estimate.Estimate.to_dict())."""
    err = (f"estimate: ±{e['error_pct']:.0f} % on published measurements ({e['error_basis']})"
           if e.get("error_pct") is not None else f"estimate: {e.get('error_basis', 'not validated')}")
    share = e.get("unmodelled_share") or 0.0
    low = (f"; LOW CONFIDENCE: unmodelled ({share:.1%})" if e.get("low_confidence") else
           f"; unmodelled ({share:.1%})" if e.get("unmodelled") else "")
    return (f"≈ {e['cycles'] / 1e6:.3g} M cycles ≈ {e['ms']:.3g} ms @ {e['clock_mhz']:g} MHz on "
            f"{e.get('board') or e['core']}, {err}{low}")


def _op_ms(p: Profile) -> list[float]:
    """Estimated milliseconds per profile row ([] without an estimate)."""
    e = p.estimate
    if not e or len(e.get("per_op", [])) != len(p.ops):
        return []
    return [c / (e["clock_mhz"] * 1e3) for c in e["per_op"]]


def _estimate_rows(e: dict | None) -> list[str]:
    if not e:
        return []
    ws = e.get("flash_wait_states")
    rows = [f"  cycle estimate (kernels): {estimate_headline(e)}",
            f"    used: {e['core']} timing table (resources/timing/{e['core']}.json) on the {e['stream_core']} "
            f"instruction stream, clock {e['clock_mhz']:g} MHz ({e['clock_source']}), flash wait states "
            f"{'unknown' if ws is None else ws} ({e['wait_states_source']}), stall per load "
            f"{e['stall_per_load']:.2f} cycles (fitted by bench/cycle_estimate.py)",
            "    not modelled: caches and flash accelerators (ART, I-cache) beyond one fitted stall per load, "
            "bus contention, DMA"]
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
    ms = _op_ms(p)
    rows = [f"  top {min(top, len(p.ops))} ops:",
            f"  {'node':{w}} {'op':28} {u.name:>12} {'share':>6} {'MACs':>10} {u.name[:5] + '/MAC':>10} "
            f"{'bytes':>8}" + (f" {'≈ ms':>8}" if ms else "")]
    for o in p.top(top):
        per = "-" if o.per_mac is None else f"{o.per_mac:.2f}"
        rows.append(f"  {(o.node or '?')[:w]:{w}} {_short(o.op)[:28]:28} {o.count:12,} {o.share:6.1%} "
                    f"{_n(o.macs):>10} {per:>10} {_n(o.bytes_moved):>8}" + (f" {ms[o.index]:8.3f}" if ms else ""))
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
                est = f" (≈ {sum(ms[o.index] for o in p.ops if o.node in i.nodes):.3f} ms estimated)"
            rows.append(f"    {i.name}: {_n(i.count)} {u.name}{est}, {i.share:.1%} of the inference's kernels{around}; "
                        f"nodes {', '.join(i.nodes)}")
    else:
        rows.append("  fallback islands: none (no portable fallback in the final graph)")
    if p.no_instruction:
        rows.append(f"  ran no instruction (memory-planned views): {', '.join(p.no_instruction)}")
    rows += [f"  note: {t}" for t in p.notes]
    return "\n".join(head + rows)
