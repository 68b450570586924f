"""A lower bound of a candidate's RAM need (total RAM + Method::load) from its rewritten graph alone,
so that the search skips serialising a candidate another one already beats on both axes (serialising
is ~80 % of the search: to_executorch on a copy, 1.8 s a candidate on mobilenet_v1_025, 3-5 s on mv2).

The bound only counts what the candidate cannot avoid:
- total RAM >= the largest live sum at one op of the rewritten program (the tensors alive at one op
  overlap in time, so no planner packs them into less; an input or output the plan leaves to the caller
  is counted as I/O outside instead);
- Method::load >= per kernel call of a conv, cmlens::window or cmlens::tiles (never removed by
  to_executorch): its OpFunction pointer and argument span (4 + 8 B), one EValue* per argument (4 B),
  and its output tensor's TensorImpl (32 B), EValue (16 B) and strides (4 B a dim) (method_alloc.py's
  replay of Method::load, whose alignment padding only adds).
"""
from __future__ import annotations

from typing import Any

from backend_core.analyses.schedule.geometry import CONVS, kind_of, target_of, val_of
from backend_core.analyses.schedule.prefix import nbytes, user_input
from backend_core.target.memory.method_alloc import EVALUE, POINTER, SPAN, STRIDES, TENSOR_IMPL

_KERNELS = ("cmlens.window", "cmlens.tiles")


def live_peak(program: Any) -> int:
    """prefix.live_sums' largest sum (every tensor made before and still read at an op, its output and its
    scratch), by a sweep over lifetimes: linear where live_sums is quadratic (an 8×8 two-stage mv2 has
    thousands of nodes)."""
    order = [n for n in program.graph.nodes if n.op in ("placeholder", "call_function")]
    index = {n: i for i, n in enumerate(order)}
    x = user_input(program)
    delta = [0] * (len(order) + 2)
    for n in order:
        if (n.op == "placeholder" and n is not x) or kind_of(n) == "plumbing":
            continue                   # constants live in flash; scratch counts at its op below
        users = [index[u] for u in n.users if u in index]
        end = len(order) if any(u.op == "output" for u in n.users) else max(users, default=index[n])
        delta[index[n]] += nbytes(n)
        delta[end + 1] -= nbytes(n)
    peak = live = 0
    for i, n in enumerate(order):
        live += delta[i]
        if n.op == "call_function" and kind_of(n) != "plumbing":
            scratch = sum(nbytes(a) for a in n.args if hasattr(a, "op") and a.op == "call_function"
                          and kind_of(a) == "plumbing")
            peak = max(peak, live + scratch)
    return peak


def method_load_floor(program: Any) -> int:
    """The Method::load bytes the convs and the cmlens copies of `program` take at the least."""
    total = 0
    for n in program.graph.nodes:
        if n.op != "call_function":
            continue
        t = target_of(n)
        if t not in CONVS and not any(k in t for k in _KERNELS):
            continue
        v = val_of(n)
        dims = len(v.shape) if v is not None and hasattr(v, "shape") else 0
        total += POINTER[0] + SPAN[0] + POINTER[0] * (len(n.args) + len(n.kwargs))
        total += TENSOR_IMPL[0] + EVALUE[0] + STRIDES[0] * dims
    return total


def ram_need_floor(program: Any) -> int:
    """What the candidate's measured RAM need (Measured.ram_need) cannot be below."""
    return live_peak(program) + method_load_floor(program)
