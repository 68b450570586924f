"""Which nodes of the float export a reproducer keeps: the candidate sets `cmlens repro` tries, and the
shrinking that leaves only what the failure needs. Every function takes `reproduces(names) -> bool`
(one candidate file run) and only ever returns a set that reproduced, so the result is proven, not
inferred."""
from __future__ import annotations

from typing import Any, Callable

Reproduces = Callable[[set[str]], bool]


def closure(fail: Any, allowed: set[str]) -> set[str]:
    """`fail` and the producers reachable from it through nodes in `allowed`."""
    keep, todo = {fail.name}, [fail]
    while todo:
        for a in todo.pop().all_input_nodes:
            if a.name in allowed and a.name not in keep:
                keep.add(a.name)
                todo.append(a)
    return keep


def depth_sets(fail: Any, max_depth: int) -> list[set[str]]:
    """Compute-node ancestors of `fail` within depth 0..max_depth."""
    sets, frontier, keep = [], [fail], {fail.name}
    sets.append(set(keep))
    for _ in range(max_depth):
        nxt = [a for n in frontier for a in n.all_input_nodes if a.op == "call_function" and a.name not in keep]
        if not nxt:
            break
        keep |= {a.name for a in nxt}
        frontier = nxt
        sets.append(set(keep))
    return sets


def grow_ancestors(fail: Any, max_depth: int, reproduces: Reproduces) -> set[str] | None:
    """The first ancestor depth whose subgraph reproduces, shrunk one producer at a time (a dropped
    producer becomes an input and what only fed it goes too). Cheap: most failures are local."""
    keep = next((cand for cand in depth_sets(fail, max_depth) if reproduces(cand)), None)
    if keep is None:
        return None
    graph_order = [n for n in fail.graph.nodes if n.name in keep and n.name != fail.name]
    for n in graph_order:              # producers nearest the inputs first: they are the likeliest to go
        if n.name not in keep:
            continue
        trial = closure(fail, keep - {n.name})
        if trial != keep and reproduces(trial):
            keep = trial
    return keep


def _window(order: list[Any], i: int, j: int) -> set[str]:
    return {n.name for n in order[i:j + 1]}


def narrow_window(fail: Any, reproduces: Reproduces) -> set[str] | None:
    """For a failure that needs more than the op's producers (an op upstream that changes how the
    quantizer annotates it, a sibling downstream): everything up to the failing op, else the whole
    graph; then the latest start, and (whole graph only) the earliest end, of a window in graph order
    that still reproduces (binary searches: each step keeps a window that reproduced). Trying the
    prefix first keeps each candidate small when nothing downstream matters. None when neither does."""
    order = [n for n in fail.graph.nodes if n.op == "call_function"]
    f, end = order.index(fail), len(order) - 1
    last = next((j for j in dict.fromkeys((f, end)) if reproduces(_window(order, 0, j))), None)
    if last is None:
        return None
    lo, hi = 0, f                      # invariant: window(lo, last) reproduces
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if reproduces(_window(order, mid, last)):
            lo = mid
        else:
            hi = mid - 1
    start, lo, hi = lo, f, last        # invariant: window(start, hi) reproduces
    while lo < hi:
        mid = (lo + hi) // 2
        if reproduces(_window(order, start, mid)):
            hi = mid
        else:
            lo = mid + 1
    return _window(order, start, hi)


def delta_shrink(fail: Any, keep: set[str], reproduces: Reproduces) -> set[str]:
    """Delta debugging over the kept nodes (never the failing one): drop runs of nodes in graph order,
    halving the run length down to single nodes, keeping every drop after which it still reproduces.
    A dropped node's value becomes an input of the file."""
    order = [n.name for n in fail.graph.nodes if n.name in keep and n.name != fail.name]
    size = max(1, len(order) // 2)
    while True:
        i = 0
        while i < len(order):
            part = set(order[i:i + size])
            if reproduces(keep - part):
                keep = keep - part
                order = [name for name in order if name not in part]
            else:
                i += size
        if size == 1:
            return keep
        size = max(1, size // 2)
