"""Suggested changes the tool can make itself, as edits of a copy of the float export (the user's
model and file are never touched). Each rewrite returns the edited program and how it renamed
nodes ({new name: old name}), so a re-lowering's fallbacks can be matched with the original's."""
from __future__ import annotations

import copy
from typing import Any, Callable

from backend_core.stages.fallback.layout_rewrites import (cat_through_contiguous, channels_last_after_views,
                              channels_last_into_convs, collapse_permutation, fake_val as _fake, norms_through_contiguous,
                              permute_in_fewer_dims, permute_through_contiguous)
from backend_core.stages.fallback.parameter_folding import FOLD_PARAMS, fold_parameter_computations

Rewrite = Callable[[Any], tuple[Any, dict[str, str]]]

__all__ = ["REWRITES", "compose", "collapse_permutation"]


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
            t1.meta = {**n.meta, "val": _fake(lambda v, d=d, last=last: v.transpose(d, last), val)}
            c1 = g.call_function(aten.clone.default, (t1,), {"memory_format": torch.contiguous_format})
            c1.meta = {**n.meta, "val": _fake(lambda v: v.contiguous(), t1.meta["val"])}
            sm = g.call_function(aten.softmax.int, (c1, last))
            sm.meta = {**n.meta, "val": _fake(lambda v, last=last: v.softmax(last), c1.meta["val"])}
            t2 = g.call_function(aten.transpose.int, (sm, d, last))
            t2.meta = {**n.meta, "val": _fake(lambda v, d=d, last=last: v.transpose(d, last), sm.meta["val"])}
        old = n.name
        n.replace_all_uses_with(t2)
        g.erase_node(n)
        renames[sm.name] = old
    ep.graph_module.recompile()
    return ep, renames


def drop_noop_alias(ep: Any) -> tuple[Any, dict[str, str]]:
    """Every aten.alias taken out (its users read its input). torch.export records a view that keeps
    every element (timm's GhostModule: `out[:, :self.out_chs]` with out_chs == all channels) as
    aten.alias; to_edge turns that into alias_copy, whose output is contiguous (NCHW) even when its
    input is channels-last, so every op after it loses channels-last and the Cortex-M kernels refuse
    them (ghostnet_050: the squeeze-excite multiply fails AtenToCortexMPass). The user's own fix is
    to skip the view when it selects everything; the values are the same either way."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    for n in list(g.nodes):
        if n.op != "call_function" or n.target != aten.alias.default:
            continue
        if any(u.op == "output" for u in n.users):       # a graph output keeps its name in the signature
            continue
        n.replace_all_uses_with(n.args[0])
        g.erase_node(n)
    ep.graph_module.recompile()
    return ep, {}


NOOP_ALIAS = "drop_noop_alias"
CAT_CONTIGUOUS = "cat_through_contiguous"
PERMUTE_CONTIGUOUS = "permute_through_contiguous"
CL_INTO_CONVS = "channels_last_into_convs"
CL_AFTER_VIEWS = "channels_last_after_views"
FEWER_DIMS = "permute_in_fewer_dims"
NORMS_CONTIGUOUS = "norms_through_contiguous"

REWRITES: dict[str, tuple[Rewrite, str]] = {
    FOLD_PARAMS: (fold_parameter_computations, "every computation that reads only parameters (a weight's max-norm "
                                               "constraint, parametrization or weight norm) folded into a constant, "
                                               "checked equal on the example inputs"),
    "relu6_to_hardtanh": (relu6_to_hardtanh, "every F.relu6(x) written as F.hardtanh(x, 0.0, 6.0)"),
    "softmax_dim_last": (softmax_dim_last, "every softmax over a non-last dim moved to the last dim "
                                           "(transpose, softmax(-1), transpose back)"),
    NOOP_ALIAS: (drop_noop_alias, "every view that keeps the whole tensor (exported as aten.alias, e.g. "
                                  "`out[:, :n]` with n == all channels) skipped, so to_edge makes no contiguous "
                                  "alias_copy of a channels-last tensor"),
    CAT_CONTIGUOUS: (cat_through_contiguous, "every concatenation of channels-last tensors along dim 1-3 done "
                                             "on NCHW copies and turned back to channels-last (ExecuTorch's "
                                             "portable cat ignores the dim order)"),
    PERMUTE_CONTIGUOUS: (permute_through_contiguous, "every permute of a channels-last tensor done on an NCHW "
                                                     "copy (ExecuTorch's portable permute_copy refuses mixed dim "
                                                     "orders)"),
    CL_INTO_CONVS: (channels_last_into_convs, "every conv fed straight by a view given a channels-last copy "
                                              "of its input (to_edge's view copies are contiguous; CMSIS-NN "
                                              "convs refuse that)"),
    CL_AFTER_VIEWS: (channels_last_after_views, "every view or permute whose result has channels-last strides "
                                                "in eager (a window reverse, a same-shape view of a conv output) "
                                                "followed by a channels-last clone (to_edge's view copies are "
                                                "contiguous; CMSIS-NN adds and convs then meet mixed layouts)"),
    FEWER_DIMS: (permute_in_fewer_dims, "every permute of more than 4 dims made on a view that merges the dims "
                                        "that stay together, then viewed back (CMSIS-NN's transpose takes at most "
                                        "4 dims)"),
    NORMS_CONTIGUOUS: (norms_through_contiguous, "every batch/group/layer norm of a channels-last tensor that "
                                                 "stays on a portable kernel done on an NCHW copy and turned back "
                                                 "to channels-last (ExecuTorch's portable norms take only "
                                                 "contiguous tensors)"),
}


def compose(names: list[str]) -> Rewrite | None:
    """One float_rewrite applying REWRITES[name] in order; None for no names."""
    if not names:
        return None

    def apply(ep: Any) -> tuple[Any, dict[str, str]]:
        renames: dict[str, str] = {}
        for name in names:
            try:
                ep, more = REWRITES[name][0](ep)
            except Exception as e:  # named, so the failure is reported as the tool's rewrite
                e.rewrite = name      # type: ignore[attr-defined]
                raise
            renames.update({new: renames.get(old, old) for new, old in more.items()})
        return ep, renames
    return apply
