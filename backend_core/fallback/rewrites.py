"""Suggested changes the tool can make itself, as edits of a copy of the float export (the user's
model and file are never touched). Each rewrite returns the edited program and how it renamed
nodes ({new name: old name}), so a re-lowering's fallbacks can be matched with the original's."""
from __future__ import annotations

import copy
from typing import Any, Callable

Rewrite = Callable[[Any], tuple[Any, dict[str, str]]]


def _fake(fn: Callable[..., Any], val: Any, *args: Any) -> Any:
    """`fn(val, *args)` on the program's fake tensors (a new node needs its meta["val"])."""
    from torch._guards import detect_fake_mode

    mode = detect_fake_mode([val])
    if mode is None:
        return fn(val, *args)
    with mode:
        return fn(val, *args)


def relu6_to_hardtanh(ep: Any) -> tuple[Any, dict[str, str]]:
    """F.relu6(x) → F.hardtanh(x, 0.0, 6.0): same function, and conv/linear/add + hardtanh is a
    quantizer pattern that fuses into the kernel's activation range."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    renames: dict[str, str] = {}
    for n in list(g.nodes):
        if n.op == "call_function" and n.target in (aten.relu6.default, aten.relu6_.default):
            with g.inserting_after(n):
                new = g.call_function(aten.hardtanh.default, (n.args[0], 0.0, 6.0))
            new.meta = dict(n.meta)
            old = n.name
            n.replace_all_uses_with(new)
            g.erase_node(n)
            renames[new.name] = old
    ep.graph_module.recompile()
    return ep, renames


def softmax_dim_last(ep: Any) -> tuple[Any, dict[str, str]]:
    """softmax(x, d) with d not last → transpose(d, -1), contiguous, softmax(-1), transpose back."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    renames: dict[str, str] = {}
    for n in list(g.nodes):
        if n.op != "call_function" or n.target not in (aten.softmax.int, aten._softmax.default):
            continue
        x, dim = n.args[0], n.args[1]
        val = x.meta.get("val")
        if val is None:
            continue
        d = dim % val.dim()
        if d == val.dim() - 1:
            continue
        last = val.dim() - 1
        with g.inserting_before(n):
            t1 = g.call_function(aten.transpose.int, (x, d, last))
            t1.meta = {**n.meta, "val": _fake(lambda v: v.transpose(d, last), val)}
            c1 = g.call_function(aten.clone.default, (t1,), {"memory_format": torch.contiguous_format})
            c1.meta = {**n.meta, "val": _fake(lambda v: v.contiguous(), t1.meta["val"])}
            sm = g.call_function(aten.softmax.int, (c1, last))
            sm.meta = {**n.meta, "val": _fake(lambda v: v.softmax(last), c1.meta["val"])}
            t2 = g.call_function(aten.transpose.int, (sm, d, last))
            t2.meta = {**n.meta, "val": _fake(lambda v: v.transpose(d, last), sm.meta["val"])}
        old = n.name
        n.replace_all_uses_with(t2)
        g.erase_node(n)
        renames[sm.name] = old
    ep.graph_module.recompile()
    return ep, renames


REWRITES: dict[str, tuple[Rewrite, str]] = {
    "relu6_to_hardtanh": (relu6_to_hardtanh, "every F.relu6(x) written as F.hardtanh(x, 0.0, 6.0)"),
    "softmax_dim_last": (softmax_dim_last, "every softmax over a non-last dim moved to the last dim "
                                           "(transpose, softmax(-1), transpose back)"),
}
