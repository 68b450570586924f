"""The search: split point × patch grid × planner setting, each candidate measured from ExecuTorch's
own plan of its re-serialised program, the Pareto front (total RAM against extra MACs), and a host
check of every candidate offered: the scheduled program run with the cortex_m ops' reference kernels
must give the unscheduled program's outputs bit for bit (torch.equal), else it is not offered."""
from __future__ import annotations

import copy
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from backend_core.common.errors import BadInputError, Cancelled
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

    def to_dict(self) -> dict[str, Any]:
        return {"plain": self.plain.to_dict(), "plain_macs": self.plain_macs, "layer_floor_bytes": self.layer_floor,
                "layer_floor_op": self.layer_floor_op, "patch_floor_bytes": self.patch_floor,
                "patch_floor_split": self.patch_floor_split, "front": [c.to_dict() for c in self.front],
                "tried": self.tried, "dropped": self.dropped, "why_region_ends": self.why_region_ends}


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
           cancel: threading.Event | None = None) -> SearchResult:
    """Measure every candidate, keep the Pareto front, check each front candidate on the host."""
    say = on_progress or (lambda text: None)
    plain = measure_pte(serialise(ep))
    plain_macs = program_macs(ep)
    x_bytes = nbytes(user_input(ep)) // (4 if int8 else 1)
    cands, why = split_candidates(ep)
    if not cands:
        raise BadInputError(f"The program has no convolution prefix to run patch by patch: {why}.",
                            "Patch schedules need convolutions right after the input.")
    prefixes = [p for p in cands if p.name in splits] if splits else choose_splits(ep, x_bytes)
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
    for k, (split, grid) in enumerate(todo):
        if cancel is not None and cancel.is_set():
            raise Cancelled("cancelled during the schedule search")
        say(f"candidate {k + 1}/{len(todo)}: {split} in {grid[0]}×{grid[1]} patches")
        found.append(_measured(ep, split, grid, int8, planners[0], target, plain, plain_macs))
    # the other planner settings for the candidates on the first planner's front only: they move
    # buffers between the arena and the caller, they do not change which split or grid is best
    for c in [c for c in pareto(found) if c.split]:
        for planner in planners[1:]:
            say(f"planner {planner}: {c.split} in {c.grid[0]}×{c.grid[1]} patches")
            found.append(_measured(ep, c.split, c.grid, int8, planner, target, plain, plain_macs))
    front, dropped = _checked_front(ep, inputs, target, found, say)
    return SearchResult(plain, plain_macs, lf, lf_op, floors[0][0], floors[0][1], front, len(found), dropped, why)


def _measured(ep: Any, split: str, grid: tuple[int, int], int8: bool, planner: str, target: str,
              plain: Measured, plain_macs: int) -> Candidate:
    r = schedule_program(ep, split, grid, target, int8=int8)
    macs = program_macs(r.program)
    m = measure_pte(serialise(r.program, planner))
    return Candidate(split, grid, int8, planner, m, macs, macs / plain_macs - 1, copy_bytes(r.program),
                     m.pte_bytes - plain.pte_bytes, r.pads, input_quant=r.input_quant.to_dict() if r.input_quant else None)


def _checked_front(ep: Any, inputs: tuple, target: str, found: list[Candidate],
                   say: Callable[[str], None]) -> tuple[list[Candidate], list[str]]:
    plain_out = _outputs(ep, inputs)
    dropped: list[str] = []
    pool = list(found)
    while True:
        front = pareto(pool)
        todo = [c for c in front if c.bit_exact is None]
        if not todo:
            return front, dropped
        for c in todo:
            say(f"host check: {c.split} {c.grid[0]}×{c.grid[1]} ({c.planner})")
            r = schedule_program(ep, c.split, c.grid, target, int8=c.int8_input)
            c.bit_exact = bit_exact(plain_out, r.program, host_inputs(r.program, inputs, c.input_quant))
            if not c.bit_exact:
                dropped.append(f"{c.split} {c.grid[0]}×{c.grid[1]}: outputs differ from the unscheduled program")
                pool = [d for d in pool if not (d.split == c.split and d.grid == c.grid)]


def pick(result: SearchResult, budget: float = MAX_EXTRA_MACS) -> Candidate | None:
    """auto: the least RAM need (total RAM + Method::load) within the MAC budget (else the least extra MACs of
    the front)."""
    ok = [c for c in result.front if c.extra_macs <= budget]
    if ok:
        return min(ok, key=lambda c: c.measured.ram_need)
    return min(result.front, key=lambda c: c.extra_macs) if result.front else None

