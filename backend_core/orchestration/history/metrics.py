"""The figures of one lowering, as a flat `name -> number` dict: what a history series plots and what a
change is measured on. Read from the compare's facts (`compare.extract.facts_from_report`: fallbacks on
the op the user wrote, memory totals, instructions, SQNR, accuracy) plus the report's own stage counts
and lowering time, so a history shows the same numbers as `cmlens compare` and `cmlens gate`.

Names: `fallbacks` (user ops on portable kernels), `fallbacks.<category>`, `fallback_op.<op>`,
`cmsis_nn_ops` / `portable_ops` (final-graph kernels), `arena_bytes`, `pte_bytes` (flash), ...,
`fits` (1/0 on the job's board), `instructions`, `instructions_op.<op>`, `estimated_ms` (the cycle
estimate of a profile on its board), `output_sqnr_db`,
`worst_layer_sqnr_db`, `top1.<float|fake_quant|lowered|target>` (%), `lowering_s`."""
from __future__ import annotations

from typing import Any

NOISY = {"lowering_s": 0.25}          # metric -> relative change that counts (the rest are deterministic)
NOISE_FLOOR = {"lowering_s": 1.0}     # ... and the absolute change below which it is noise (one sample per
                                      # commit on a shared machine: ±50 % on a 1 s lowering, measured)
COUNTED = ("fallbacks.", "fallback_op.", "instructions_op.")   # absent on an ok record means 0

LABELS = {
    "fallbacks": "fallbacks (user ops on portable kernels)",
    "cmsis_nn_ops": "kernels on CMSIS-NN", "portable_ops": "kernels on portable (fp32/int8) code",
    "arena_bytes": "arena peak (bytes)", "pte_bytes": "flash: .pte (bytes)", "constant_bytes": "constants (bytes)",
    "program_bytes": "program without constants (bytes)", "method_allocator_bytes": "RAM: method allocator (bytes)",
    "temp_allocator_bytes": "RAM: temp allocator (bytes)", "scratch_bytes": "CMSIS-NN scratch (bytes)",
    "ram_free_bytes": "RAM free on the board (bytes)", "flash_free_bytes": "flash free on the board (bytes)",
    "fits": "fits the board (1 yes, 0 no)", "instructions": "instructions per inference",
    "estimated_ms": "estimated latency of the kernels on the board (ms, cycle estimate)",
    "output_sqnr_db": "output SQNR vs float (dB)", "worst_layer_sqnr_db": "worst layer SQNR vs float (dB)",
    "lowering_s": "lowering time (s)",
    "schedule_total_ram_bytes": "RAM of the scheduled program: arena + I/O (bytes)",
    "schedule_extra_macs_pct": "extra MACs of the schedule (halo recompute, %)",
}
_ORDER = ("fallbacks", "cmsis_nn_ops", "portable_ops", "arena_bytes", "pte_bytes", "method_allocator_bytes",
          "fits", "instructions", "estimated_ms", "output_sqnr_db", "worst_layer_sqnr_db", "top1.lowered", "top1.float",
          "top1.fake_quant", "top1.target", "lowering_s")


def label(metric: str) -> str:
    if metric in LABELS:
        return LABELS[metric]
    head, _, tail = metric.partition(".")
    return {"fallbacks": f"fallbacks: {tail}", "fallback_op": f"fallbacks of {tail}",
            "instructions_op": f"instructions in {tail}", "top1": f"top-1 {tail.replace('_', '-')} (%)"
            }.get(head, metric)


def sort_key(metric: str) -> tuple[int, str]:
    return (_ORDER.index(metric), "") if metric in _ORDER else (len(_ORDER), metric)


def _short_op(op: str) -> str:
    """aten.layer_norm.default -> aten.layer_norm."""
    parts = op.replace("::", ".").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else op


def _num(v: Any) -> float | int | None:
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else (int(v) if isinstance(v, bool) else None)


def metrics_of(report: dict[str, Any], facts: Any | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metrics, notes) of a finished lowering. `facts`: its compare.SideFacts, or None for a report
    without graphs (then the fallbacks come from the report's own list, by node)."""
    m: dict[str, Any] = {}
    notes: dict[str, Any] = {}
    if facts is not None:
        fbs = facts.fallback_groups()
        m["fallbacks"] = len(fbs)
        for g in fbs:
            cat, op = g.category or "unexplained", _short_op(g.op)
            m[f"fallbacks.{cat}"] = m.get(f"fallbacks.{cat}", 0) + 1
            m[f"fallback_op.{op}"] = m.get(f"fallback_op.{op}", 0) + 1
        notes["fallbacks"] = [{"op": g.label(), "category": g.category, "source": g.source} for g in fbs]
    else:
        fbs, seen = [], set()               # nodes one user op became count once (the report's `group`)
        for f in report.get("fallbacks") or []:
            group_key = (f.get("group") or f.get("node"), f.get("category"))
            if group_key not in seen:
                seen.add(group_key)
                fbs.append(f)
        m["fallbacks"] = len(fbs)
        for f in fbs:
            cat, op = f.get("category") or "unexplained", _short_op(f.get("op", "?"))
            m[f"fallbacks.{cat}"] = m.get(f"fallbacks.{cat}", 0) + 1
            m[f"fallback_op.{op}"] = m.get(f"fallback_op.{op}", 0) + 1
    stages = report.get("stages") or []
    if stages:
        counts = stages[-1].get("counts") or {}
        m["cmsis_nn_ops"] = int(counts.get("cmsis_nn", 0))
        m["portable_ops"] = int(counts.get("portable_fallback", 0))
    mem = report.get("memory") or {}
    for key, name in (("arena_bytes", "arena_bytes"), ("pte_bytes", "pte_bytes"), ("constant_bytes", "constant_bytes"),
                      ("program_bytes", "program_bytes"), ("temp_allocator_bytes", "temp_allocator_bytes"),
                      ("scratch_bytes_max", "scratch_bytes")):
        if _num(mem.get(key)) is not None:
            m[name] = mem[key]
    if _num((mem.get("method_allocator") or {}).get("used")) is not None:
        m["method_allocator_bytes"] = mem["method_allocator"]["used"]
    if "pte_bytes" not in m and _num(report.get("pte_bytes")) is not None:
        m["pte_bytes"] = report["pte_bytes"]
    chosen = (report.get("schedule") or {}).get("chosen")
    if chosen:                  # --schedule: the scheduled program's RAM and its halo recompute
        m["schedule_total_ram_bytes"] = chosen["total_ram_bytes"]
        m["schedule_extra_macs_pct"] = round(100 * chosen["extra_macs"], 3)
    verdict = mem.get("verdict") or {}
    if verdict:
        m["fits"] = 1 if verdict.get("fits") else 0
        for k in ("ram_free_bytes", "flash_free_bytes"):
            if _num(verdict.get(k)) is not None:
                m[k] = verdict[k]
    if facts is not None and facts.profile and _num(facts.profile.get("total")) is not None:
        m["instructions"] = facts.profile["total"]
        for g in facts.groups:
            if g.instructions:
                k = f"instructions_op.{_short_op(g.op)}"
                m[k] = m.get(k, 0) + g.instructions
    elif _num(((report.get("run") or {}).get("cycles") or {}).get("per_inference")) is not None:
        m["instructions"] = report["run"]["cycles"]["per_inference"]
    if facts is not None and facts.profile and _num(facts.profile.get("ms")) is not None:
        m["estimated_ms"] = round(float(facts.profile["ms"]), 4)     # deterministic: the same instructions
        e = facts.profile.get("estimate") or {}
        notes["estimate"] = {k: e.get(k) for k in ("board", "clock_mhz", "flash_wait_states", "error_pct",
                                                   "low_confidence")}
    if facts is not None and facts.numerics:
        if _num(facts.numerics.get("output_sqnr_db")) is not None:
            m["output_sqnr_db"] = round(facts.numerics["output_sqnr_db"], 3)
        layered = [g for g in facts.groups if g.sqnr_db is not None]
        if layered:
            worst = min(layered, key=lambda g: g.sqnr_db)
            m["worst_layer_sqnr_db"] = round(worst.sqnr_db, 3)
            notes["worst_layer"] = worst.label()
    acc = (facts.accuracy if facts is not None else None) or {}
    for model, vals in (acc.get("models") or {}).items():
        if _num((vals or {}).get("top1")) is not None:
            m[f"top1.{model}"] = round(100.0 * vals["top1"], 3)
    secs = lowering_seconds(report)
    if secs is not None:
        m["lowering_s"] = secs
    return m, notes


def lowering_seconds(report: dict[str, Any]) -> float | None:
    """The pipeline's own time: the sum of its stages (a cache hit keeps the stages' times of the lowering
    it saved). The wall time of the first lowering in a process also holds the one-time imports of torch
    and ExecuTorch (8 s against 1.4 s for a small MLP), which would show as a change between commits."""
    stages = [s.get("seconds") for s in report.get("stages") or []]
    if stages and all(_num(s) is not None for s in stages):
        return round(float(sum(stages)), 3)
    return round(float(report["seconds"]), 3) if _num(report.get("seconds")) is not None else None


def value(metrics: dict[str, Any], metric: str, ok: bool = True) -> Any:
    """A metric of a record: a counted metric absent from an ok record is 0 (no fallback of that op)."""
    if metric in metrics:
        return metrics[metric]
    if ok and (metric.startswith(COUNTED) or metric == "fallbacks"):
        return 0
    return None
