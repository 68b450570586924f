"""Match the op groups of N sides into rows, by what the user wrote, never by node names.

Sides with provenance are matched in three passes, each on what the previous left over:
  1. `exact`       module path + op at quantisation time + source file:line
  2. `line moved`  module path + op + the source line's text (an edit above it moved the line)
  3. `module+op`   module path + op, in graph order (the line itself was edited)
A side without provenance (a bare .pte from another tool) is aligned with the reference side by
operator order, op and output shape (difflib over the execution order), and every row it joins says
`weak`. Groups that match nothing become rows of their own: added or removed ops."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable

from backend_core.orchestration.compare.facts import FUSED, GONE, PROV_FULL, OpGroup, SideFacts, op_key

EXACT, MOVED, MODULE_OP, WEAK, REFERENCE = "exact", "line moved", "module+op", "weak", "reference"
NOT_VISIBLE = "n/a"     # a fused/removed op cannot be seen on a side without provenance
UNMATCHED = "unmatched"  # on this side only: an added (or removed) op
MATCH_LEVELS = (REFERENCE, EXACT, MOVED, MODULE_OP, WEAK, NOT_VISIBLE, UNMATCHED)


@dataclass
class Row:
    """One op the user wrote, across sides: each cell the groups of one side (empty: not there)."""

    cells: list[list[OpGroup]]
    match: list[str] = field(default_factory=list)      # per side, one of MATCH_LEVELS or ""

    @property
    def rep(self) -> OpGroup:
        """The reference side's group when it has one, else the first side's that has."""
        i = self.match.index(REFERENCE) if REFERENCE in self.match else -1
        return self.cells[i][0] if i >= 0 and self.cells[i] else next(c[0] for c in self.cells if c)


_LEVELS: tuple[tuple[str, Callable[[OpGroup], tuple | None]], ...] = (
    (EXACT, lambda g: (g.module, g.op, g.file_line) if g.file_line else None),
    (MOVED, lambda g: (g.module, g.op, g.code.strip()) if g.code.strip() else None),
    (MODULE_OP, lambda g: (g.module, g.op, g.anchor)),
)


def _counted(items: list, keyfn: Callable) -> dict[tuple, Any]:
    """key + its occurrence number among equal keys, in order -> item."""
    seen: dict[tuple, int] = {}
    out: dict[tuple, Any] = {}
    for it in items:
        k = keyfn(it)
        if k is None:
            continue
        n = seen.get(k, 0)
        seen[k] = n + 1
        out[(*k, n)] = it
    return out


def _insert_new(rows: list[Row], side: SideFacts, s: int, n_sides: int) -> None:
    """Groups of side `s` that no row took become rows, placed after the row of the group before them."""
    after = -1
    for g in side.groups:
        ri = next((i for i, r in enumerate(rows) if any(x is g for x in r.cells[s])), None)
        if ri is not None:
            after = ri
            continue
        row = Row([[] for _ in range(n_sides)], [""] * n_sides)
        row.cells[s] = [g]
        row.match[s] = UNMATCHED
        after += 1
        rows.insert(after, row)


def _match_keyed(rows: list[Row], side: SideFacts, s: int) -> None:
    left = list(side.groups)
    for level, keyfn in _LEVELS:
        open_rows = [r for r in rows if not r.cells[s] and r.rep.provenance != "none"]
        by_key = _counted(open_rows, lambda r, f=keyfn: f(r.rep))
        taken = set()
        for k, g in _counted(left, keyfn).items():
            r = by_key.get(k)
            if r is not None:
                r.cells[s] = [g]
                r.match[s] = level
                taken.add(id(g))
        left = [g for g in left if id(g) not in taken]


def _pairs(a: list[tuple], b: list[tuple]) -> list[tuple[int, int]]:
    """Aligned positions: equal (op, shape) runs, then equal ops inside replaced runs."""
    out: list[tuple[int, int]] = []
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.extend(zip(range(i1, i2), range(j1, j2)))
        elif tag == "replace":
            j = j1
            for i in range(i1, i2):
                for jj in range(j, j2):
                    if a[i][0] == b[jj][0]:
                        out.append((i, jj))
                        j = jj + 1
                        break
    return out


def _match_weak(rows: list[Row], ref_side: SideFacts, ref: int, side: SideFacts, s: int) -> None:
    ref_nodes = ref_side.nodes_in_order()
    s_nodes = side.nodes_in_order()
    tok = lambda n: (op_key(n.op), tuple(n.shape or ()))   # noqa: E731
    row_of = {id(g): r for r in rows for g in r.cells[ref]}
    for i, j in _pairs([tok(n) for n, _ in ref_nodes], [tok(n) for n, _ in s_nodes]):
        g = s_nodes[j][1]
        r = row_of.get(id(ref_nodes[i][1]))
        if r is None or any(g is x for rr in rows for x in rr.cells[s]):
            continue
        r.cells[s].append(g)
        r.match[s] = WEAK
    for r in rows:
        if not r.cells[s] and r.cells[ref] and r.cells[ref][0].status in (FUSED, GONE):
            r.match[s] = NOT_VISIBLE


def match_sides(sides: list[SideFacts]) -> tuple[list[Row], int]:
    """Rows in the reference side's graph order (added ops after their predecessor), and the index of
    the reference side: the first side with provenance (side 0 if none has)."""
    n = len(sides)
    ref = next((i for i, sd in enumerate(sides) if sd.provenance == PROV_FULL), 0)
    rows = []
    for g in sides[ref].groups:
        r = Row([[] for _ in range(n)], [""] * n)
        r.cells[ref] = [g]
        r.match[ref] = REFERENCE
        rows.append(r)
    for s, side in enumerate(sides):
        if s == ref:
            continue
        weak = side.provenance != PROV_FULL or sides[ref].provenance != PROV_FULL
        if weak:
            _match_weak(rows, sides[ref], ref, side, s)
        else:
            _match_keyed(rows, side, s)
        _insert_new(rows, side, s, n)
    return rows, ref
