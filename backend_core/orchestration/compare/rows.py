"""Per-op rows: what each side did with one op the user wrote, and what changed against side 0.

A cell merges the groups a side has in the row (a weak side can bring several nodes to one user
op: one-to-many). A fused activation (many-to-one) has a cell with status `fused` naming the op it
was folded into; on the side where it did not fuse, it is its own kernel (often a fallback)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.orchestration.compare.facts import FALLBACK, FUSED, OpGroup, SideFacts
from backend_core.orchestration.compare.matching import NOT_VISIBLE, Row, op_key
from backend_core.orchestration.compare.qparams import DEFAULT_RTOL, qparam_differences, qparams_summary

# SQNR moves by hundredths of a dB between runs of the same program on other random inputs: not a change.
SQNR_NOISE_DB = 0.05


@dataclass
class Cell:
    status: str
    nodes: list[str]
    ops: list[str]                    # final ops, short (`cortex_m.quantized_linear`)
    match: str                        # how this side was matched (matching.MATCH_LEVELS)
    shape: list[int] | None = None    # the primary node's output shape
    category: str = ""
    reason: str = ""
    suggestion: str = ""
    source: str | None = None
    fused_into: str | None = None     # label of the op it was folded into
    qparams: dict[str, Any] = field(default_factory=dict)
    arena_bytes: int | None = None
    scratch_bytes: int | None = None
    out_bytes: int | None = None
    instructions: int | None = None
    ms: float | None = None           # the cycle estimate's milliseconds (profile with an estimate)
    sqnr_db: float | None = None

    @property
    def qparams_text(self) -> str:
        return qparams_summary(self.qparams)


@dataclass
class RowView:
    index: int
    label: str
    op: str
    module: str
    source: str | None
    cells: list[Cell | None]
    change: str                       # same | changed | added | removed (against side 0)
    changes: list[list[str]]          # per side: what differs from side 0 (empty for side 0)
    weak: bool                        # matched by order/op/shape on some side
    match: list[str] = field(default_factory=list)   # per side (matching.MATCH_LEVELS, "" absent)


def _cell(groups: list[OpGroup], match: str, side: SideFacts) -> Cell:
    g0 = groups[0]
    nodes = [n for g in groups for n in g.nodes]
    status = FALLBACK if any(g.status == FALLBACK for g in groups) else g0.status
    fb = next((g for g in groups if g.status == FALLBACK), g0)
    instr = [g.instructions for g in groups if g.instructions is not None]
    ms = [g.ms for g in groups if g.ms is not None]
    arena = [g.arena_bytes for g in groups if g.arena_bytes is not None]
    scratch = [g.scratch_bytes for g in groups if g.scratch_bytes is not None]
    sq = [g.sqnr_db for g in groups if g.sqnr_db is not None]
    prim = next((n for n in nodes if n.kind in ("cmsis_nn", "portable_fallback", "delegate")), nodes[0] if nodes else None)
    host = side.group(g0.fused_into) if g0.fused_into else None
    return Cell(status=status, nodes=[n.id for n in nodes], ops=[op_key(n.op) for n in nodes], match=match,
                shape=prim.shape if prim else None, category=fb.category, reason=fb.reason,
                suggestion=fb.suggestion, source=next((g.source for g in groups if g.source), None),
                fused_into=host.label() if host else None,
                qparams=next((g.qparams for g in groups if g.qparams), {}),
                arena_bytes=max(arena) if arena else None, scratch_bytes=sum(scratch) if scratch else None,
                out_bytes=groups[-1].out_bytes,
                instructions=sum(instr) if instr else None, ms=sum(ms) if ms else None,
                sqnr_db=sq[-1] if sq else None)


def _differences(a: Cell, b: Cell, rtol: float) -> list[str]:
    out = []
    if a.status != b.status:
        what = f"status: {a.status} -> {b.status}"
        if b.status == FUSED and b.fused_into:
            what += f" (into {b.fused_into})"
        out.append(what)
    elif a.status == FALLBACK and a.category != b.category:
        out.append(f"fallback category: {a.category} -> {b.category}")
    if a.ops != b.ops and a.status != FUSED and b.status != FUSED:
        out.append(f"ops: {ops_text(a.ops) or '-'} -> {ops_text(b.ops) or '-'}")
    if a.shape is not None and b.shape is not None and list(a.shape) != list(b.shape):
        out.append(f"shape: {a.shape} -> {b.shape}")
    qd = qparam_differences(a.qparams, b.qparams, rtol)
    if qd:
        out.append("qparams: " + "; ".join(qd[:3]) + (f"; +{len(qd) - 3} more" if len(qd) > 3 else ""))
    for what, x, y, unit in (("arena alive", a.arena_bytes, b.arena_bytes, " B"),
                             ("scratch", a.scratch_bytes, b.scratch_bytes, " B"),
                             ("instructions", a.instructions, b.instructions, "")):
        if x is not None and y is not None and x != y:
            pct = f" ({(y - x) / x * 100:+.1f} %)" if x else ""
            out.append(f"{what}: {x:,} -> {y:,}{unit}{pct}")
    if a.sqnr_db is not None and b.sqnr_db is not None and abs(a.sqnr_db - b.sqnr_db) >= SQNR_NOISE_DB:
        out.append(f"SQNR vs float: {a.sqnr_db:.1f} -> {b.sqnr_db:.1f} dB")
    return out


def build_rows(sides: list[SideFacts], rows: list[Row], rtol: float = DEFAULT_RTOL) -> list[RowView]:
    out = []
    for i, r in enumerate(rows):
        cells = [_cell(c, r.match[s], sides[s]) if c else None for s, c in enumerate(r.cells)]
        rep = r.rep
        base = cells[0]
        changes: list[list[str]] = [[]]
        for s in range(1, len(sides)):
            c = cells[s]
            if base is None and c is None:
                changes.append([])
            elif base is None:
                changes.append(["only on this side"] if r.match[0] != NOT_VISIBLE else [])
            elif c is None:
                changes.append(["not on this side"] if r.match[s] != NOT_VISIBLE else [])
            else:
                changes.append(_differences(base, c, rtol))
        if base is None and r.match[0] != NOT_VISIBLE:
            change = "added"
        elif base is not None and any(c is None and r.match[s] != NOT_VISIBLE for s, c in enumerate(cells)):
            change = "removed"
        else:
            change = "changed" if any(changes) else "same"
        source = next((c.source for c in cells if c is not None and c.source), None)
        out.append(RowView(index=i, label=rep.label(), op=rep.op, module=rep.module, source=source, cells=cells,
                           change=change, changes=changes, weak=any(m == "weak" for m in r.match),
                           match=list(r.match)))
    return out


def ops_text(ops: list[str], spelled: int = 6) -> str:
    """The kernels an op became, readable at any count: up to `spelled` by name in graph order, more as a
    count per kind, most frequent first (an nn.GRU decomposes into hundreds of portable nodes)."""
    if len(ops) <= spelled:
        return ", ".join(ops)
    counts: dict[str, int] = {}
    for o in ops:
        counts[o] = counts.get(o, 0) + 1
    kinds = sorted(counts.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{k} ×{n}" for k, n in kinds[:spelled])
    rest = f", {len(kinds) - spelled} more kind(s)" if len(kinds) > spelled else ""
    return f"{len(ops)} kernels: {shown}{rest}"
