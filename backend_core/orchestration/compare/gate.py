"""`cmlens gate`: a result against a baseline, check by check. Each check passes, fails (a regression)
or cannot run (the data is missing on a side: a bad input, exit 2, never a silent pass).

Limits: `+5%` (relative to the baseline) or `+2048` / `+2K` (bytes or instructions above it);
SQNR `-1dB` (at most 1 dB below the baseline); accuracy `-0.5` (top-1 of the lowered program at most 0.5
points below the baseline's, on the same data). Qparams are compared with the stated relative
tolerance (qparams.DEFAULT_RTOL); rounding noise of another machine is never a regression."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.orchestration.compare.baseline import check_identity
from backend_core.orchestration.compare.facts import SideFacts
from backend_core.orchestration.compare.qparams import DEFAULT_RTOL
from backend_core.orchestration.compare.result import Comparison, compare_facts

_LIMIT = re.compile(r"^\s*([+-]?)\s*(\d+(?:\.\d+)?)\s*(%|k|ki|kib|kb|m|mi|mib|mb|db)?\s*$", re.IGNORECASE)
_SCALE = {"k": 1024, "ki": 1024, "kib": 1024, "kb": 1000, "m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 10**6}


@dataclass(frozen=True)
class Limit:
    """How far above (below, for SQNR) the baseline a value may go."""

    amount: float
    percent: bool
    text: str

    def allowed(self, base: float) -> float:
        return base * (1 + self.amount / 100.0) if self.percent else base + self.amount


def parse_limit(text: str, flag: str, *, db: bool = False) -> Limit:
    m = _LIMIT.match(text or "")
    unit = (m.group(3) or "").lower() if m else ""
    if m is None or (db and unit not in ("", "db")) or (not db and unit == "db"):
        example = "-1dB" if db else "+5% or +2048 (or +2K)"
        raise BadInputError(f"{flag} {text!r} is not a limit.", f"Write it like {flag} {example}.")
    sign = -1.0 if m.group(1) == "-" else 1.0
    amount = sign * float(m.group(2)) * _SCALE.get(unit, 1)
    if db:
        amount = -abs(amount)          # "-1dB" and "1dB" both mean: at most 1 dB lower
    return Limit(amount, unit == "%", text.strip())


_POINTS = re.compile(r"^\s*([+-]?)\s*(\d+(?:\.\d+)?)\s*(points?|pts?|pp|%)?\s*$", re.IGNORECASE)


def parse_points(text: str, flag: str) -> Limit:
    """`-0.5` (or `-0.5pt`, `0.5`): top-1 at most 0.5 percentage points below the baseline."""
    m = _POINTS.match(text or "")
    if m is None:
        raise BadInputError(f"{flag} {text!r} is not a limit in accuracy points.",
                            f"Write it like {flag} -0.5 (top-1 at most 0.5 points below the baseline).")
    return Limit(-abs(float(m.group(2))), False, text.strip())


def board_of(text: str) -> Any:
    """A board name (cmlens memory --board list), or `RAM[/FLASH]` sizes like `64K/256K`."""
    from backend_core.common.boards.specs import board_named, custom_board

    if re.match(r"^\s*\d", text or ""):
        ram, _, flash = text.partition("/")
        return custom_board(ram, flash or None)
    try:
        return board_named(text)
    except BadInputError as e:
        raise BadInputError(e.message, e.hint.split(". Or give")[0] + ". Or give the sizes: --fits 256K/1M "
                            "(RAM/flash).") from None


@dataclass
class Check:
    name: str
    ok: bool
    message: str
    details: list[str] = field(default_factory=list)


@dataclass
class GateOptions:
    no_new_fallbacks: bool = False
    max_arena: Limit | None = None
    max_flash: Limit | None = None
    max_instructions: Limit | None = None
    max_latency_ms: float | None = None      # an absolute limit on the cycle estimate's milliseconds
    min_sqnr: Limit | None = None
    min_accuracy: Limit | None = None
    fits: str | None = None
    same_qparams: bool = False
    rtol: float = DEFAULT_RTOL

    @property
    def any(self) -> bool:
        return bool(self.no_new_fallbacks or self.max_arena or self.max_flash or self.max_instructions
                    or self.max_latency_ms is not None or self.min_sqnr or self.min_accuracy or self.fits or self.same_qparams)


def default_options(base: SideFacts, result: SideFacts, rtol: float = DEFAULT_RTOL) -> GateOptions:
    """No check flag given: every check both sides carry data for, with no slack but the noise."""
    both = lambda attr: getattr(base, attr) is not None and getattr(result, attr) is not None   # noqa: E731
    zero = Limit(0.0, True, "+0%")
    return GateOptions(no_new_fallbacks=True, same_qparams=True, rtol=rtol,
                       max_arena=zero if both("memory") else None, max_flash=zero if both("memory") else None,
                       max_instructions=zero if both("profile") else None,
                       min_sqnr=Limit(-0.5, False, "-0.5dB") if both("numerics") else None,
                       min_accuracy=Limit(-0.5, False, "-0.5") if both("accuracy") else None)


@dataclass
class GateResult:
    checks: list[Check]
    comparison: Comparison
    notes: list[str]

    @property
    def regressions(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_dict(self) -> dict[str, Any]:
        return {"passed": not self.regressions, "notes": self.notes,
                "checks": [{"name": c.name, "ok": c.ok, "message": c.message, "details": c.details}
                           for c in self.checks]}


def _need(side: SideFacts, attr: str, who: str, flag: str, how: str) -> dict[str, Any]:
    v = getattr(side, attr)
    if v is None:
        raise BadInputError(f"{flag}: the {who} has no {attr} data, so this check cannot run.", how)
    return v


def _threshold(name: str, base: float | None, value: float | None, limit: Limit, unit: str, flag: str) -> Check:
    if base is None or value is None:
        raise BadInputError(f"{flag}: {name} is missing on the {'baseline' if base is None else 'result'}.",
                            "Gate a result of the same kind as the baseline.")
    allowed = limit.allowed(base)
    pct = f" ({(value - base) / base * 100:+.1f} %)" if base else ""
    msg = f"{name} {base:,}{unit} -> {value:,}{unit}{pct}, limit {limit.text} (at most {allowed:,.0f}{unit})"
    return Check(name, value <= allowed, msg)


def ram_of(memory: dict[str, Any]) -> int | None:
    """What --max-arena gates: a scheduled program's total RAM (arena + the I/O buffers outside it: the
    program that ships), else the planned arena (which holds the I/O in ExecuTorch's default plan)."""
    sched = memory.get("schedule") or {}
    return sched.get("total_ram_bytes", memory.get("arena_bytes"))


def run_gate(base: SideFacts, result: SideFacts, opts: GateOptions) -> GateResult:
    """BadBaselineError for a baseline of another configuration; BadInputError for a check without data."""
    notes = check_identity(base, result)
    cmp = compare_facts([base, result], opts.rtol)
    d = cmp.deltas[0]
    checks: list[Check] = []
    if opts.no_new_fallbacks:
        added = d["fallbacks_added"]
        checks.append(Check("new fallbacks", not added,
                            f"new fallbacks: {len(added)} ({d['fallback_count']['base']} in the baseline, "
                            f"{d['fallback_count']['value']} now)",
                            [f"{f['label']} — {f['category']}" + (f" [{f['source']}]" if f.get("source") else "")
                             + f": {f['reason']}" for f in added]))
    if opts.same_qparams:
        qp = d["qparams_changed"]
        checks.append(Check("qparams", not qp, f"qparams changed beyond rtol {opts.rtol:g}: {len(qp)} op(s)",
                            [f"{q['label']}: {q['differences']}" for q in qp]))
    how_mem = "Write the result with `cmlens lower MODEL --json F` (it carries `memory`) and the baseline from one."
    if opts.max_arena:
        bm, rm = _need(base, "memory", "baseline", "--max-arena", how_mem), _need(result, "memory", "result",
                                                                                 "--max-arena", how_mem)
        scheduled = bool(bm.get("schedule") or rm.get("schedule"))
        checks.append(_threshold("total RAM of the program (scheduled: arena + I/O outside it)" if scheduled
                                 else "planned arena", ram_of(bm), ram_of(rm), opts.max_arena, " B", "--max-arena"))
    if opts.max_flash:
        bm, rm = _need(base, "memory", "baseline", "--max-flash", how_mem), _need(result, "memory", "result",
                                                                                 "--max-flash", how_mem)
        checks.append(_threshold(".pte (flash)", bm.get("pte_bytes"), rm.get("pte_bytes"), opts.max_flash,
                                 " B", "--max-flash"))
    if opts.max_instructions:
        how = "Attach a profile to both: RESULT@profile=RUN.json from `cmlens run MODEL --profile --json RUN.json`."
        bp = _need(base, "profile", "baseline", "--max-instructions", how)
        rp = _need(result, "profile", "result", "--max-instructions", how)
        key = "total" if bp.get("total") is not None and rp.get("total") is not None else "ops_total"
        unit = f" {rp.get('unit') or 'instructions'}"
        checks.append(_threshold("instructions" + (" (kernels)" if key == "ops_total" else ""), bp.get(key),
                                 rp.get(key), opts.max_instructions, "", "--max-instructions"))
        checks[-1].message = checks[-1].message.replace(", limit", f"{unit}, limit", 1)
    if opts.max_latency_ms is not None:
        checks.append(latency_check(base, result, opts.max_latency_ms))
    if opts.min_sqnr:
        how = "Run numerics on both (`cmlens gate ... --numerics N`, or RESULT@numerics=NUM.json)."
        bn = _need(base, "numerics", "baseline", "--min-sqnr", how)
        rn = _need(result, "numerics", "result", "--min-sqnr", how)
        b, r = bn.get("output_sqnr_db"), rn.get("output_sqnr_db")
        if b is None or r is None:
            raise BadInputError("--min-sqnr: no output SQNR on a side.", how)
        floor = b + opts.min_sqnr.amount
        checks.append(Check("output SQNR", r >= floor, f"output SQNR vs float {b:.2f} dB -> {r:.2f} dB "
                            f"({r - b:+.2f} dB), limit {opts.min_sqnr.text} (at least {floor:.2f} dB)"))
    if opts.min_accuracy:
        checks.append(_accuracy_check(base, result, opts.min_accuracy))
    if opts.fits:
        from backend_core.target.memory import fit_findings

        rm = _need(result, "memory", "result", "--fits", how_mem)
        found = fit_findings(rm, board_of(opts.fits))
        checks.append(Check(f"fits {opts.fits}", not found,
                            f"fits {opts.fits}: " + ("yes" if not found else "NO"),
                            [f"{f.rule}: {f.message}" for f in found]))
    return GateResult(checks, cmp, notes)


def parse_ms(text: str, flag: str) -> float:
    """`50`, `50ms`, `7.5 ms`: a positive number of milliseconds (BadInputError otherwise: exit 2)."""
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(ms)?\s*$", text or "", re.IGNORECASE)
    if m is None or float(m.group(1)) <= 0:
        raise BadInputError(f"{flag} {text!r} is not a latency.", f"Write it in milliseconds, like {flag} 50.")
    return float(m.group(1))


def latency_check(base: SideFacts, result: SideFacts, limit: float, alone: bool = False) -> Check:
    """The result's estimated milliseconds at most `limit`; when over, the islands and ops whose
    milliseconds grew against the baseline (or, with no estimate there, the costliest) are named."""
    how = ("Attach a profile with a cycle estimate: RESULT@profile=RUN.json from `cmlens run MODEL --board B "
           "--profile --json RUN.json` on QEMU (its instructions by class give the estimate).")
    rp = _need(result, "profile", "result", "--max-latency-ms", how)
    ms = rp.get("ms")
    if ms is None:
        raise BadInputError("--max-latency-ms: the result's profile has no cycle estimate (no instruction classes, "
                            "or no timing table for its core).", how)
    e = rp.get("estimate") or {}
    bms = (base.profile or {}).get("ms")
    err = "" if e.get("error_pct") is None else f", estimate ±{e['error_pct']:.0f} %"
    low = "; LOW CONFIDENCE (unmodelled instructions above 5 %)" if e.get("low_confidence") else ""
    was = f"{bms:.3f} ms -> " if bms is not None else ""
    pct = f" ({(ms - bms) / bms * 100:+.1f} %)" if bms else ""
    msg = (f"estimated latency (kernels, {e.get('board') or e.get('core') or '?'} @ {e.get('clock_mhz') or 0:g} MHz"
           f"{err}) {was}{ms:.3f} ms{pct}, limit {limit:g} ms{low}")
    ok = ms <= limit
    return Check("estimated latency", ok, msg, [] if ok else _grew(base, result, alone))


def _grew(base: SideFacts, result: SideFacts, alone: bool = False) -> list[str]:
    """The fallback islands and ops that cost more milliseconds than on the baseline, the most first (without
    an estimate on the baseline: the costliest of the result)."""
    bp = base.profile or {}
    has_base = bp.get("ms") is not None
    b_isl = {i["key"]: i.get("ms") for i in bp.get("islands", [])}
    rows: list[tuple[float, str]] = []
    for i in (result.profile or {}).get("islands", []):
        if i.get("ms") is None:
            continue
        was = b_isl.get(i["key"]) if has_base else None
        grew = i["ms"] - (was or 0.0) if has_base else i["ms"]
        what = "new" if has_base and i["key"] not in b_isl else (f"{was:.3f} ms ->" if was is not None else "")
        rows.append((grew, f"island {i['name']}: {what} {i['ms']:.3f} ms (+{grew:.3f} ms)" if has_base
                     else f"island {i['name']}: {i['ms']:.3f} ms"))
    for g in result.groups:
        if g.ms is None:
            continue
        old = base.group(g.key) if has_base else None
        was = old.ms if old is not None else None
        grew = g.ms - (was or 0.0) if has_base else g.ms
        what = "new" if has_base and was is None else (f"{was:.3f} ms ->" if was is not None else "")
        rows.append((grew, f"{g.label()}: {what} {g.ms:.3f} ms (+{grew:.3f} ms)" if has_base
                     else f"{g.label()}: {g.ms:.3f} ms"))
    rows = sorted((r for r in rows if r[0] > 1e-9), key=lambda r: -r[0])
    head = "grew against the baseline" if has_base else "costliest" if alone else \
        "costliest (the baseline has no estimate)"
    return [f"{head}: {text}" for _, text in rows[:5]]


def _accuracy_check(base: SideFacts, result: SideFacts, limit: Limit) -> Check:
    """Top-1 of the lowered program against the baseline's, in points, on the same data and sample count."""
    how = ("Evaluate both on labelled data: `cmlens gate MODEL --accuracy N` (N samples of its get_eval_data(), "
           "0: all; --eval-data DIR for a folder), and write the baseline the same way (--write-baseline).")
    ba = _need(base, "accuracy", "baseline", "--min-accuracy", how)
    ra = _need(result, "accuracy", "result", "--min-accuracy", how)
    if (ba.get("data"), ba.get("samples")) != (ra.get("data"), ra.get("samples")):
        raise BadInputError(f"--min-accuracy: the baseline was evaluated on {ba.get('samples')} samples of "
                            f"{ba.get('data')}, the result on {ra.get('samples')} samples of {ra.get('data')}: "
                            "accuracies on other samples are not comparable.",
                            "Evaluate the result on the baseline's data and sample count (--accuracy N, --eval-data).")
    b, r = 100.0 * ba["models"]["lowered"]["top1"], 100.0 * ra["models"]["lowered"]["top1"]
    floor = b + limit.amount
    details = []
    if r < floor:
        fb = 100.0 * (ra["models"].get("float") or {}).get("top1", 0.0)
        details.append(f"float top-1 {fb:.2f} %: the lowered program loses {fb - r:.2f} points to it, "
                       f"{ra.get('flips', 0)} prediction(s) flipped")
        details += [f"{g['flips']} flip(s) start at {g.get('label') or g.get('layer')}" for g in ra.get("by_layer", [])[:3]]
    return Check("accuracy", r >= floor - 1e-9,
                 f"top-1 accuracy (lowered, {ra.get('samples')} samples) {b:.2f} % -> {r:.2f} % ({r - b:+.2f} points), "
                 f"limit {limit.text} points (at least {floor:.2f} %)", details)


def absolute_options(opts: GateOptions) -> bool:
    """Only checks against a fixed limit were asked (--max-latency-ms, --fits): no baseline is needed."""
    relative = (opts.no_new_fallbacks or opts.same_qparams or opts.max_arena or opts.max_flash
                or opts.max_instructions or opts.min_sqnr or opts.min_accuracy)
    return opts.any and not relative


def run_absolute_gate(result: SideFacts, opts: GateOptions) -> GateResult:
    """The fixed-limit checks of a result on its own (no baseline): the result is its own reference, so
    the comparison has no delta and a latency over the limit names the costliest islands and ops."""
    from dataclasses import replace

    alone = replace(result, profile=None, groups=[])
    checks: list[Check] = []
    if opts.max_latency_ms is not None:
        checks.append(latency_check(alone, result, opts.max_latency_ms, alone=True))
    if opts.fits:
        from backend_core.target.memory import fit_findings

        how = "Write the result with `cmlens lower MODEL --json F` (it carries `memory`)."
        found = fit_findings(_need(result, "memory", "result", "--fits", how), board_of(opts.fits))
        checks.append(Check(f"fits {opts.fits}", not found, f"fits {opts.fits}: " + ("yes" if not found else "NO"),
                            [f"{f.rule}: {f.message}" for f in found]))
    return GateResult(checks, compare_facts([result, result], opts.rtol), ["no baseline: fixed limits only"])


def gate_text(g: GateResult, base_label: str | None, result_label: str) -> str:
    lines = [f"gate {result_label}" + (f" against baseline {base_label}:" if base_label else " (no baseline):")]
    lines += [f"  note: {n}" for n in g.notes]
    for c in g.checks:
        lines.append(f"  {'ok  ' if c.ok else 'FAIL'}  {c.message}")
        lines += [f"          {x}" for x in c.details[:20]]
        if len(c.details) > 20:
            lines.append(f"          … {len(c.details) - 20} more")
    n = len(g.regressions)
    lines.append(f"{n} regression(s)." if n else "No regression.")
    return "\n".join(lines)
