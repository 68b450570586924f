"""The search: split point × patch grid × planner setting, each candidate measured from ExecuTorch's
own plan of its re-serialised program, the Pareto front (total RAM against extra MACs), and a host
check of every candidate offered: the scheduled program run with the cortex_m ops' reference kernels
must give the unscheduled program's outputs bit for bit (torch.equal), else it is not offered.

Speed (issue 47: the search against the plain lowering, bench/schedule_search.py): each candidate is rewritten
once (the program kept for the other planner setting and the host check); a candidate whose RAM-need floor
(bound.py) already loses to a measured one on both axes is not serialised, the lowest floors measured
first; check="chosen" (the schedule step's auto and fit) checks only the candidate pick()/checked() hand
out, the rest of the front says "not checked"."""
from __future__ import annotations

import copy
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from backend_core.common.errors import BadInputError, Cancelled
from backend_core.analyses.schedule.bound import ram_need_floor
from backend_core.analyses.schedule.geometry import hw
from backend_core.analyses.schedule.measure import Measured, copy_bytes, measure_pte, program_macs, serialise
from backend_core.analyses.schedule.prefix import (
    layer_floor, live_sums, nbytes, patch_floor, split_candidates, user_input)
from backend_core.analyses.schedule.rewrite import schedule_program

GRIDS = (2, 3, 4, 6, 8)
PLANNERS = ("greedy", "greedy-io-outside")
MAX_EXTRA_MACS = 0.15          # the instruction budget, on MACs (halo recompute)


@dataclass
class Candidate:
    split: str
    grid: tuple[int, int]
    int8_input: bool
    planner: str
    measured: Measured
    macs: int
    extra_macs: float              # fraction over the unscheduled program
    copy_bytes: int                # slices, pads, cats write this much per inference
    flash_delta: int               # .pte bytes over the unscheduled program's
    pads: int = 0
    bit_exact: bool | None = None  # None: not checked (not offered)
    input_quant: dict[str, Any] | None = None

    @property
    def total_ram(self) -> int:
        return self.measured.total_ram

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["measured"] = self.measured.to_dict()
        d["grid"] = list(self.grid)
        d["total_ram_bytes"] = self.total_ram
        d["input_dtype"] = "int8" if self.int8_input else "float32"
        return d


@dataclass
class SearchResult:
    plain: Measured
    plain_macs: int
    layer_floor: int
    layer_floor_op: str
    patch_floor: int
    patch_floor_split: str
    front: list[Candidate]
    tried: int
    dropped: list[str] = field(default_factory=list)     # candidates that failed the host check
    why_region_ends: str = ""
    skipped: int = 0               # candidates not serialised: their RAM-need floor already lost (bound.py)
    checker: Any = field(default=None, repr=False, compare=False)   # _Checker: host checks on demand

    def to_dict(self) -> dict[str, Any]:
        return {"plain": self.plain.to_dict(), "plain_macs": self.plain_macs, "layer_floor_bytes": self.layer_floor,
                "layer_floor_op": self.layer_floor_op, "patch_floor_bytes": self.patch_floor,
                "patch_floor_split": self.patch_floor_split, "front": [c.to_dict() for c in self.front],
                "tried": self.tried, "dropped": self.dropped, "why_region_ends": self.why_region_ends,
                "skipped": self.skipped}

    def program_of(self, ep: Any, c: Candidate, target: str) -> Any:
        """`c`'s rewritten program (a Rewritten): the search's own when it kept it (every front candidate of
        a search), else rewritten now; the caller that takes a candidate need not rewrite it again."""
        runs = self.checker.runs if self.checker is not None else None
        kept = runs.programs.get((c.split, c.grid)) if runs is not None and c.split else None
        return kept or schedule_program(ep, c.split, c.grid, target, int8=c.int8_input)

    def plain_outputs(self, ep: Any, inputs: tuple) -> list[Any]:
        """The unscheduled program's host outputs, run once per search (its host checks ran it already)."""
        if self.checker is None:
            return _outputs(ep, inputs)
        return self.checker.plain_outputs()


def pareto(cands: list[Candidate]) -> list[Candidate]:
    """Candidates no other beats on both RAM need (total RAM + Method::load) and extra MACs, by RAM need."""
    front: list[Candidate] = []
    for c in sorted(cands, key=lambda c: (c.measured.ram_need, c.extra_macs)):
        if not front or c.extra_macs < front[-1].extra_macs:
            front.append(c)
    return front


def _outputs(program: Any, inputs: tuple) -> list[Any]:
    import torch

    from backend_core.stages.pipeline.int_conv import install_int_dilated_conv

    install_int_dilated_conv()
    with torch.no_grad():
        out = copy.deepcopy(program).module()(*inputs)
    return [out] if isinstance(out, torch.Tensor) else list(out)


def host_inputs(program: Any, inputs: tuple, quant: dict[str, Any] | None) -> tuple:
    """The scheduled program's inputs: the user's, or their int8 image by the program's own quantize."""
    if quant is None:
        return inputs
    import torch

    q = torch.ops.cortex_m.quantize_per_tensor(inputs[0], quant["scale"], quant["zero_point"], quant["qmin"],
                                               quant["qmax"], torch.int8)
    return (q, *inputs[1:])


def bit_exact(plain_out: list[Any], program: Any, inputs: tuple) -> bool:
    import torch

    got = _outputs(program, inputs)
    return len(got) == len(plain_out) and all(torch.equal(a, b) for a, b in zip(got, plain_out))


def estimated_extra_macs(ep: Any, prefix: Any, grid: tuple[int, int]) -> float:
    """The halo recompute of a grid at this split, from the receptive-field boxes alone (no rewrite):
    the prefix convs' extra MACs over all patches, as a fraction of the whole program's MACs."""
    from backend_core.analyses.schedule.geometry import conv_geometry, kind_of, macs_of, needed_boxes
    from backend_core.analyses.schedule.rewrite import spans

    convs = [n for n in prefix.nodes if kind_of(n) == "conv"]
    whole = sum(macs_of(n) for n in convs)
    if not whole:
        return 0.0
    h, w = hw(prefix.split)
    patched = 0
    for h0, h1 in spans(h, grid[0]):
        for w0, w1 in spans(w, grid[1]):
            need = needed_boxes(prefix.nodes, prefix.split, (h0, h1, w0, w1))
            for n in convs:
                b = need.get(n)
                if b is not None:
                    cout = int(n.meta["val"].shape[1])
                    patched += (b[1] - b[0]) * (b[3] - b[2]) * cout * conv_geometry(n).macs_per_output
    return (patched - whole) / max(program_macs(ep), 1)


def choose_splits(ep: Any, input_bytes: int, keep: int = 4, budget: float = MAX_EXTRA_MACS) -> list[Any]:
    """The split points worth trying: past the op that holds the program's peak, the lowest patch floors
    among those whose 4×4 halo recompute (estimated from the boxes) stays within the MAC budget, and the
    first one past the peak (the least recompute)."""
    cands, _ = split_candidates(ep)
    sums = dict(live_sums(ep))
    peak_node = max(sums, key=lambda n: sums[n])
    past = [p for p in cands if peak_node in p.nodes and len(p.nodes) > 1] or cands[-keep:]
    if len(past) <= keep:
        return past
    cheap = [p for p in past if estimated_extra_macs(ep, p, (4, 4)) <= budget] or past[:1]
    ranked = sorted(cheap, key=lambda p: (patch_floor(ep, p, input_bytes), past.index(p)))
    picks = [past[0]] + [p for p in ranked if p is not past[0]][:keep - 1]
    return sorted(picks, key=past.index)


def stage_prefix(ep: Any, first: Any, second: Any) -> Any | None:
    """`second`'s prefix when `first`'s split tensor is assembled whole first (stage 2 of "A,B"), or None
    when `second` cannot be reached from `first` alone."""
    cands, _ = split_candidates(ep, first.split)
    return next((p for p in cands if p.split is second.split), None)


def two_stage_specs(ep: Any, prefixes: list[Any], grids: tuple[int, ...], input_bytes: int,
                    budget: float = MAX_EXTRA_MACS) -> list[tuple[str, tuple[int, int]]]:
    """Two-stage schedules worth trying. Stage 2 ends at the chosen split with the lowest patch floor (then
    the smallest split tensor); stage 1 at the smallest split tensor between the first chosen split (past
    the peak) and stage 2: it is assembled whole in between, and two short prefixes recompute less halo
    than one deep one (mv2: conv2d_default_3's 24×56×56, then conv2d_default_7). Grids whose estimated
    recompute (both stages, from the boxes) exceeds the budget are not tried; stage 2 runs in the same grid
    or in half of it. The spec names each stage's grid ("A@4x4,B@2x2")."""
    if len(prefixes) < 2:
        return []
    cands, _ = split_candidates(ep)
    index = {p.name: i for i, p in enumerate(cands)}
    second = min(prefixes[1:], key=lambda p: (patch_floor(ep, p, input_bytes), nbytes(p.split), index[p.name]))
    between = [p for p in cands if index[prefixes[0].name] <= index[p.name] < index[second.name]]
    if not between:
        return []
    first = min(between, key=lambda p: (nbytes(p.split), index[p.name]))
    stage2 = stage_prefix(ep, first, second)
    if stage2 is None:
        return []
    out = []
    for g in grids:
        # stage 2 in the same grid, or in half of it: its tensors are smaller, fewer patches cost less
        for g2 in sorted({g, g // 2} & set(grids), reverse=True):
            if g > min(hw(first.split)) or g2 > min(hw(second.split)):
                continue
            if estimated_extra_macs(ep, first, (g, g)) + estimated_extra_macs(ep, stage2, (g2, g2)) <= budget:
                out.append((f"{first.name}@{g}x{g},{second.name}@{g2}x{g2}", (g, g)))
    return out


def search(ep: Any, inputs: tuple, target: str, *, int8: bool = False, grids: tuple[int, ...] = GRIDS,
           planners: tuple[str, ...] = PLANNERS, splits: list[str] | None = None,
           on_progress: Callable[[str], None] | None = None,
           cancel: threading.Event | None = None, check: str = "front") -> SearchResult:
    """Measure every candidate, keep the Pareto front, check each front candidate on the host
    (check="front"), or only the one a caller takes (check="chosen": pick() and checked() check it then;
    the others stay "not checked", and no unchecked candidate is ever picked)."""
    say = on_progress or (lambda text: None)
    plain = measure_pte(serialise(ep))
    plain_macs = program_macs(ep)
    x_bytes = nbytes(user_input(ep)) // (4 if int8 else 1)
    cands, why = split_candidates(ep)
    if not cands:
        raise BadInputError(f"The program has no convolution prefix to run patch by patch: {why}.",
                            "Patch schedules need convolutions right after the input.")
    prefixes = [p for p in cands if p.name in splits] if splits else choose_splits(ep, x_bytes)
    if int8:                       # the int8 input IS the leading quantize's output: no split there
        prefixes = [p for p in prefixes if p.nodes != [next(iter(user_input(ep).users))]]
    lf, lf_op = layer_floor(ep)
    floors = sorted((patch_floor(ep, p, x_bytes), p.name) for p in cands)
    found: list[Candidate] = [Candidate("", (1, 1), False, "greedy", plain, plain_macs, 0.0, 0, 0, bit_exact=True)]
    if int8:                       # the int8 input alone, no patches: the 0 % MACs end of the front
        from backend_core.analyses.schedule.rewrite import int8_input

        alone = copy.deepcopy(ep)
        quant = int8_input(alone)
        for planner in planners:
            m = measure_pte(serialise(alone, planner))
            found.append(Candidate("", (1, 1), True, planner, m, plain_macs, 0.0, 0, m.pte_bytes - plain.pte_bytes,
                                   input_quant=quant.to_dict()))
    todo = [(p.name, (g, g)) for p in prefixes for g in grids if g <= min(hw(p.split))]
    todo += two_stage_specs(ep, prefixes, grids, x_bytes) if not splits else []
    runs = _Runs(ep, target, int8, plain, plain_macs, planners[0])
    floors_of = []
    for k, (split, grid) in enumerate(todo):
        if cancel is not None and cancel.is_set():
            raise Cancelled("cancelled during the schedule search")
        say(f"rewrite {k + 1}/{len(todo)}: {split} in {grid[0]}×{grid[1]} patches")
        floors_of.append((runs.floor(split, grid), k))
    # the lowest RAM-need floors first: likely the front, and each one measured lets a later candidate
    # whose floor already loses to it on both axes go unserialised (mv2: the two-stage ones win)
    for n, (_, k) in enumerate(sorted(floors_of)):
        split, grid = todo[k]
        if cancel is not None and cancel.is_set():
            raise Cancelled("cancelled during the schedule search")
        say(f"candidate {n + 1}/{len(todo)}: {split} in {grid[0]}×{grid[1]} patches")
        c = runs.unless_beaten(split, grid, planners[0], found)
        if c is not None:
            found.append(c)
    # the other planner settings for the candidates on the first planner's front only: they move
    # buffers between the arena and the caller, they do not change which split or grid is best
    runs.keep_only(pareto(found))
    for c in [c for c in pareto(found) if c.split]:
        for planner in planners[1:]:
            say(f"planner {planner}: {c.split} in {c.grid[0]}×{c.grid[1]} patches")
            found.append(runs.measured(c.split, c.grid, planner))
    result = SearchResult(plain, plain_macs, lf, lf_op, floors[0][0], floors[0][1], pareto(found),
                          len(found) + len(runs.skipped), [], why, skipped=len(runs.skipped))
    result.checker = _Checker(ep, inputs, runs, found, say)
    if check == "front":
        while any(not checked(result, c) for c in list(result.front)):
            pass
    return result


class _Runs:
    """Each candidate rewritten once (the rewritten program kept for the planner settings and the host
    check) and serialised only when its RAM-need floor (bound.py) does not already lose to a candidate
    measured before it on both axes: such a candidate can never be on the front."""

    def __init__(self, ep: Any, target: str, int8: bool, plain: Measured, plain_macs: int, planner: str) -> None:
        self.ep, self.target, self.int8, self.plain, self.plain_macs = ep, target, int8, plain, plain_macs
        self.planner = planner
        self.programs: dict[tuple[str, tuple[int, int]], Any] = {}
        self.skipped: list[tuple[str, tuple[int, int], float, int]] = []   # split, grid, extra MACs, floor
        self._floors: dict[tuple[str, tuple[int, int]], int] = {}

    def rewritten(self, split: str, grid: tuple[int, int]) -> Any:
        r = self.programs.get((split, grid))
        if r is None:
            r = self.programs[(split, grid)] = schedule_program(self.ep, split, grid, self.target, int8=self.int8)
        return r

    def floor(self, split: str, grid: tuple[int, int]) -> int:
        """The candidate's RAM-need floor (bound.py), from its rewritten program (kept for measuring)."""
        if (split, grid) not in self._floors:
            self._floors[(split, grid)] = ram_need_floor(self.rewritten(split, grid).program)
        return self._floors[(split, grid)]

    def unless_beaten(self, split: str, grid: tuple[int, int], planner: str,
                      beaten_by: list[Candidate]) -> Candidate | None:
        """The candidate measured, or None (kept in `skipped`) when one of `beaten_by` has a RAM need at
        most its floor and at most its extra MACs (pareto() would never put it on the front)."""
        r = self.rewritten(split, grid)
        extra = program_macs(r.program) / self.plain_macs - 1
        floor = self.floor(split, grid)
        if any(d.measured.ram_need <= floor and d.extra_macs <= extra for d in beaten_by):
            self.skipped.append((split, grid, extra, floor))
            self.programs.pop((split, grid))
            return None
        return self.measured(split, grid, planner)

    def measured(self, split: str, grid: tuple[int, int], planner: str) -> Candidate:
        r = self.rewritten(split, grid)
        macs = program_macs(r.program)
        m = measure_pte(serialise(r.program, planner))
        return Candidate(split, grid, self.int8, planner, m, macs, macs / self.plain_macs - 1, copy_bytes(r.program),
                         m.pte_bytes - self.plain.pte_bytes, r.pads,
                         input_quant=r.input_quant.to_dict() if r.input_quant else None)

    def keep_only(self, cands: list[Candidate]) -> None:
        """Forget the rewritten programs of candidates off the front (each is a whole program copy)."""
        keep = {(c.split, c.grid) for c in cands}
        self.programs = {k: v for k, v in self.programs.items() if k in keep}

    def revive(self, pool: list[Candidate]) -> list[Candidate]:
        """Measure the skipped candidates no candidate left in `pool` beats any more (after a drop)."""
        back = [s for s in self.skipped
                if not any(d.measured.ram_need <= s[3] and d.extra_macs <= s[2] for d in pool)]
        self.skipped = [s for s in self.skipped if s not in back]
        return [self.measured(split, grid, self.planner) for split, grid, _, _ in back]


class _Checker:
    """The host check of a candidate, on demand: the unscheduled program's outputs once, each candidate's
    rewritten program from the search's own cache. One that differs leaves the pool (both planner
    settings), the candidates it alone beat are measured after all, and the front is recomputed."""

    def __init__(self, ep: Any, inputs: tuple, runs: _Runs, found: list[Candidate],
                 say: Callable[[str], None]) -> None:
        self.ep, self.inputs, self.runs, self.pool, self.say = ep, inputs, runs, list(found), say
        self._plain_out: list[Any] | None = None

    def plain_outputs(self) -> list[Any]:
        if self._plain_out is None:
            self._plain_out = _outputs(self.ep, self.inputs)
        return self._plain_out

    def check(self, c: Candidate, result: SearchResult) -> None:
        plain_out = self.plain_outputs()
        self.say(f"host check: {c.split} {c.grid[0]}×{c.grid[1]} ({c.planner})")
        r = (self.runs.rewritten(c.split, c.grid) if c.split else
             schedule_program(self.ep, c.split, c.grid, self.runs.target, int8=c.int8_input))
        c.bit_exact = bit_exact(plain_out, r.program, host_inputs(r.program, self.inputs, c.input_quant))
        for d in self.pool:            # the planner setting does not change what the host computes
            if (d.split, d.grid, d.int8_input) == (c.split, c.grid, c.int8_input):
                d.bit_exact = c.bit_exact
        if not c.bit_exact:
            result.dropped.append(f"{c.split} {c.grid[0]}×{c.grid[1]}: outputs differ from the unscheduled program")
            self.pool = [d for d in self.pool if not (d.split == c.split and d.grid == c.grid)]
            self.pool += self.runs.revive(self.pool)
            result.front = pareto(self.pool)


def checked(result: SearchResult, c: Candidate) -> bool:
    """Whether `c` computes the unscheduled program's values bit for bit on the host, checked now if it
    was not (a search with check="chosen"); one that differs leaves result.front."""
    if c.bit_exact is None:
        if result.checker is None:
            return False               # a result read back without its search: never offer it unchecked
        result.checker.check(c, result)
    return bool(c.bit_exact)


def pick(result: SearchResult, budget: float = MAX_EXTRA_MACS) -> Candidate | None:
    """auto: the least RAM need (total RAM + Method::load) within the MAC budget (else the least extra MACs of
    the front), checked bit for bit on the host (the next best when it differs)."""
    while True:
        ok = [c for c in result.front if c.extra_macs <= budget]
        c = (min(ok, key=lambda c: c.measured.ram_need) if ok else
             min(result.front, key=lambda c: c.extra_macs) if result.front else None)
        if c is None or checked(result, c):
            return c
