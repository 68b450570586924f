"""The same model profiled on several CPUs, side by side, with the ratio per layer.

The CPU changes the lowered graph (scratch sizes, MVE linears with kernel_sum), so node ids may differ
between CPUs; rows are matched by (debug handle, operator) first, which survive every Cortex-M pass,
then by the operator's occurrence number (the 3rd quantized_conv2d), then by node id."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.target.profile.milliseconds import error_text
from backend_core.target.profile.model import OpCost, Profile


@dataclass
class CompareRow:
    key: str                                   # the reference CPU's node id
    op: str
    module_path: str
    counts: dict[str, int | None] = field(default_factory=dict)    # cpu -> count
    macs: int | None = None

    def ratio(self, cpu: str, ref: str) -> float | None:
        a, b = self.counts.get(cpu), self.counts.get(ref)
        return None if not a or not b else a / b


@dataclass
class CpuComparison:
    model: str
    cpus: list[str]
    unit: str
    totals: dict[str, int | None]
    rows: list[CompareRow]
    estimates: dict[str, dict[str, Any]] = field(default_factory=dict)   # cpu -> its cycle estimate (if any)

    @property
    def reference(self) -> str:
        return self.cpus[0]

    def to_dict(self) -> dict[str, Any]:
        ref = self.reference
        return {"model": self.model, "cpus": self.cpus, "unit": self.unit, "reference": ref,
                "totals": self.totals,
                "estimated_ms": {c: e.get("ms") for c, e in self.estimates.items()},
                "rows": [{"node": r.key, "op": r.op, "module_path": r.module_path, "macs": r.macs,
                          "counts": r.counts, "ratio": {c: r.ratio(c, ref) for c in self.cpus}}
                         for r in self.rows]}

    def table(self) -> str:
        ref = self.reference
        short = [c.replace("cortex-", "") for c in self.cpus]
        head = [f"{self.model}: {self.unit} per layer across CPUs (ratio to {ref.replace('cortex-', '')})"]
        cols = "".join(f" {s:>11} {'x':>5}" for s in short)
        w = min(max([len(r.key) for r in self.rows] + [20]), 64)     # full node ids
        rows = [f"  {'node':{w}} {'op':26}{cols}"]
        for r in self.rows:
            cells = ""
            for c in self.cpus:
                n, q = r.counts.get(c), r.ratio(c, ref)
                cells += f" {('-' if n is None else f'{n:,}'):>11} {('-' if q is None else f'{q:.2f}'):>5}"
            op = r.op.replace("cortex_m.", "").replace(".default", "")
            rows.append(f"  {r.key[:w]:{w}} {op[:26]:26}{cells}")
        cells = ""
        for c in self.cpus:
            t, b = self.totals.get(c), self.totals.get(ref)
            q = None if not t or not b else t / b
            cells += f" {('-' if t is None else f'{t:,}'):>11} {('-' if q is None else f'{q:.2f}'):>5}"
        rows.append(f"  {'whole inference (Method::execute)':{w + 27}}{cells}")
        if self.estimates:                     # each core on its own board: the cycle estimate of its kernels
            cells = "".join(f" {('-' if c not in self.estimates else format(self.estimates[c]['ms'], '.3g')):>11} "
                            f"{'':>5}" for c in self.cpus)
            rows.append(f"  {'≈ ms, kernels (cycle estimate)':{w + 27}}{cells}")
            rows.append("  estimated on: " + ", ".join(
                f"{c.replace('cortex-', '')} {e.get('board') or e.get('core')} @ {e['clock_mhz']:g} MHz "
                f"({error_text(e, basis=False)})" for c, e in self.estimates.items()))
        return "\n".join(head + rows)


def _keys(ops: list[OpCost]) -> list[tuple[str, ...]]:
    seen: dict[str, int] = {}
    out: list[tuple[str, ...]] = []
    for o in ops:
        nth = seen[o.op] = seen.get(o.op, 0) + 1
        out.append((f"h{o.debug_handle}:{o.op}", f"n{nth}:{o.op}", o.node or f"i{o.index}"))
    return out


def compare_cpus(profiles: list[Profile]) -> CpuComparison:
    """Profiles of one model (the first is the reference) -> one row per reference op."""
    if not profiles:
        raise ValueError("no profiles to compare")
    units = {p.unit.name for p in profiles}
    ref = profiles[0]
    rows = [CompareRow(o.node or f"#{o.index}", o.op, o.module_path, {}, o.macs) for o in ref.ops]
    ref_keys = _keys(ref.ops)
    for p in profiles:
        index: dict[tuple[int, str], int] = {}
        for pos, ks in enumerate(_keys(p.ops)):
            for level, k in enumerate(ks):
                index.setdefault((level, k), pos)
        used: set[int] = set()
        for row, ks in zip(rows, ref_keys):
            at = next((index[(lv, k)] for lv, k in enumerate(ks)
                       if (lv, k) in index and index[(lv, k)] not in used), None)
            if at is not None:
                used.add(at)
            row.counts[p.target] = None if at is None else p.ops[at].count
    unit = units.pop() if len(units) == 1 else "mixed units (" + ", ".join(sorted(units)) + ")"
    return CpuComparison(ref.model, [p.target for p in profiles], unit,
                         {p.target: p.total for p in profiles}, rows,
                         {p.target: p.estimate for p in profiles if p.estimate and p.estimate.get("ms") is not None})
