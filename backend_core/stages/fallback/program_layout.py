"""--keep-going's layout workaround, made on the lowered program itself: a dim-order copy before every
kernel the pre-flight says will refuse (or misread) the layout of its tensors, and one back after it.

Why on the lowered program and not on the float export: the dim order a kernel sees is decided late
(to_edge's view copies are contiguous, the Cortex-M passes make NHWC kernels, a portable op follows its
first input), so an edit of the float export guesses it from the eager strides and can miss (an FPN's group
norms) or move the mismatch onto the next op (a SINet's multiplies: 45 findings became 101). Here the
copies go exactly where the pre-flight found the mismatch, on the tensors it named, so every layout finding
is gone after one edit and no new one appears: a tensor keeps its dim order for every other reader.
Values are unchanged (a dim-order copy moves bytes); the cost is one copy per mismatched tensor.

Strategies, by rule:
- a portable kernel that needs contiguous tensors or ignores the dim order (needs-contiguous, layout-ignored,
  pad-layout-ignored, view-of-channels-last): its 4-D inputs copied to contiguous, its output made contiguous and copied back;
- a portable or CMSIS-NN kernel whose tensors must share one dim order (dim-order-mismatch,
  cmsis-ignores-dim-order): its 4-D inputs copied to the output's dim order when all have the output's shape,
  else (a broadcast, another rank) the contiguous strategy;
- a CMSIS-NN kernel that needs channels-last input (cmsis-needs-channels-last): its 4-D inputs copied to
  channels-last."""
from __future__ import annotations

import operator
from typing import Any

from backend_core.stages.fallback.layout_rewrites import fake_val

NAME = "dim_order_copies"
CONTIGUOUS = (0, 1, 2, 3)
CHANNELS_LAST = (0, 2, 3, 1)
# the only orders a `_clone_dim_order` can make: to_executorch maps its dim_order to a memory format and
# asserts on any other (an advanced-indexing op on a channels-last tensor writes (0, 3, 2, 1): MONAI's
# BasicUNet's replicate pad)
_COPYABLE = (CONTIGUOUS, CHANNELS_LAST)
_TO_CONTIGUOUS = frozenset({"needs-contiguous", "layout-ignored", "pad-layout-ignored", "view-of-channels-last"})
_SAME_ORDER = frozenset({"dim-order-mismatch", "cmsis-ignores-dim-order", "dim-order-mixed-unverified"})
_TO_CHANNELS_LAST = frozenset({"cmsis-needs-channels-last"})
LAYOUT_RULES = _TO_CONTIGUOUS | _SAME_ORDER | _TO_CHANNELS_LAST
DESCRIPTION = ("a dim-order copy before every kernel the pre-flight found refusing or misreading the layout of "
               "its tensors, and one back after it (on the lowered program; same values)")


def layout_findings(findings: list[Any]) -> list[Any]:
    """The certain findings this workaround removes."""
    return [f for f in findings if f.certain and f.rule in LAYOUT_RULES]


def _val(n: Any) -> Any:
    v = n.meta.get("val") if hasattr(n, "meta") else None
    return v[0] if isinstance(v, (tuple, list)) and v else v


def _order(v: Any) -> tuple[int, ...] | None:
    import torch

    return tuple(int(d) for d in v.dim_order()) if isinstance(v, torch.Tensor) else None


def _stored(n: Any, stored: dict[str, tuple[int, ...]]) -> tuple[int, ...] | None:
    """The dim order the serialised program gives `n`'s output (to_executorch propagates the tensors again,
    so a node's meta can say channels-last where the program stores contiguous: Fast-SCNN's adaptive pools),
    else its meta's."""
    return stored.get(n.name) or _order(_val(n))


def _in_order(v: Any, order: tuple[int, ...]) -> Any:
    import torch

    fmt = torch.channels_last if order == CHANNELS_LAST else torch.contiguous_format
    return fake_val(lambda t: t.clone(memory_format=fmt), v)


def _copy(g: Any, src: Any, order: tuple[int, ...], *, before: Any = None, after: Any = None) -> Any:
    """`_clone_dim_order(src, dim_order=order)` (the op ExecuTorch's runtime has for it), placed before/after."""
    from executorch.exir.dialects._ops import ops as exir_ops

    ctx = g.inserting_before(before) if before is not None else g.inserting_after(after)
    with ctx:
        c = g.call_function(exir_ops.edge.dim_order_ops._clone_dim_order.default, (src,),
                            {"dim_order": list(order)})
    keep = ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node")
    c.meta = {**{k: v for k, v in src.meta.items() if k in keep}, "val": _in_order(_val(src), order)}
    _own_origin(c)
    return c


def _own_origin(node: Any) -> None:
    """The copy as its own origin, so to_executorch gives it a debug handle of its own: sharing its source's
    (through from_node) would make an ETDump report the copy's bytes as that op's output."""
    try:
        from torch.fx.traceback import NodeSource

        node.meta["from_node"] = [NodeSource(node, "cmlens --keep-going dim-order copy")]
    except Exception:  # noqa: BLE001 - a torch without NodeSource: the source's origin (shared handle) it is
        pass


def _is_constant(x: Any) -> bool:
    """A weight, bias or lifted constant (a placeholder the user does not feed): its bytes are packed for
    the kernel (a CMSIS-NN conv's NHWC weight), never an activation to reorder."""
    return x.op == "get_attr" or (x.op == "placeholder" and x.meta.get("cmlens_constant", False))


def _tensor_inputs(n: Any, first_only: bool = False) -> list[tuple[Any, Any]]:
    """(input node, its 4-D value) for every 4-D activation argument, lists (cat's tensors) included;
    `first_only`: the kernel's input (argument 0) alone."""
    import torch.fx

    out = []
    args = [n.args[0]] if first_only and n.args else [*n.args, *n.kwargs.values()]
    for a in args:
        for x in (a if isinstance(a, (list, tuple)) else [a]):
            v = _val(x) if isinstance(x, torch.fx.Node) and not _is_constant(x) else None
            if v is not None and _order(v) is not None and v.dim() == 4:
                out.append((x, v))
    return out


def _feed(g: Any, n: Any, order: tuple[int, ...], stored: dict[str, tuple[int, ...]],
          first_only: bool = False) -> int:
    """Every 4-D activation input of `n` not in `order` read through a copy in `order`; how many copies."""
    copies: dict[Any, Any] = {}
    for x, _v in _tensor_inputs(n, first_only):
        if _stored(x, stored) != order and x not in copies:
            copies[x] = _copy(g, x, order, before=n)
    if copies:
        n.args = _replace(n.args, copies)
        n.kwargs = _replace(n.kwargs, copies)
    return len(copies)


def _replace(a: Any, copies: dict[Any, Any]) -> Any:
    if isinstance(a, dict):
        return {k: _replace(v, copies) for k, v in a.items()}
    if isinstance(a, (list, tuple)):
        return type(a)(_replace(v, copies) for v in a)
    return copies.get(a, a) if _hashable(a) else a


def _hashable(a: Any) -> bool:
    try:
        hash(a)
    except TypeError:
        return False
    return True


def _output_in(g: Any, n: Any, order: tuple[int, ...], stored: dict[str, tuple[int, ...]]) -> int:
    """`n` writes its (first) output in `order`; its readers get a copy in the order they had."""
    val = n.meta.get("val")
    first = _val(n)
    old = _stored(n, stored)
    if old is None or old == order or first.dim() != 4:
        return 0
    new = _in_order(first, order)
    if old not in _COPYABLE:                    # no copy can restore it: the readers read `order` instead (the
        stored[n.name] = order                  # pre-flight checks their kernels again); no copy made here
        n.meta["val"] = type(val)((new, *val[1:])) if isinstance(val, (tuple, list)) else new
        return 0
    if isinstance(val, (tuple, list)):          # native_* norms: (out, mean, rstd), read through getitem 0
        n.meta["val"] = type(val)((new, *val[1:]))
        count = 0
        for u in list(n.users):
            if u.target is operator.getitem and u.args[1] == 0:
                u.meta["val"] = new
                count += _back(g, u, old)
        return count
    n.meta["val"] = new
    return _back(g, n, old)


def _back(g: Any, n: Any, order: tuple[int, ...]) -> int:
    back = _copy(g, n, order, after=n)
    n.replace_all_uses_with(back, delete_user_cb=lambda u: u is not back)
    return 1


def _fix(g: Any, n: Any, rule: str, stored: dict[str, tuple[int, ...]]) -> int:
    """Copies made so `n`'s kernel gets the layout `rule` asks for."""
    if rule in _TO_CHANNELS_LAST:               # the conv's or pool's input; its weight is packed already
        return _feed(g, n, CHANNELS_LAST, stored, first_only=True)
    out = _stored(n, stored)
    ins = _tensor_inputs(n)
    elementwise = "transpose" not in str(n.target) and "permute" not in str(n.target)   # a transpose moves dims
    # a broadcast operand ([1, C, 1, 1] against [1, C, H, W]) goes contiguous with the rest: the portable
    # kernels walk a broadcast by the output's logical index, which is the memory order only for contiguous
    # tensors (CGNet's PReLU `x * w` came out wrong on half its values with a channels-last output)
    same_shape = all(tuple(v.shape) == tuple(_val(n).shape) for _x, v in ins) if _val(n) is not None else False
    if (rule in _SAME_ORDER and elementwise and same_shape and out in _COPYABLE and len(out) == 4 and ins
            and len(ins) == _tensor_args(n)):
        return _feed(g, n, out, stored)
    count = _feed(g, n, CONTIGUOUS, stored)
    if rule != "view-of-channels-last":          # a view has no kernel: its output is a view of the copy
        count += _output_in(g, n, CONTIGUOUS, stored)
    return count


def _tensor_args(n: Any) -> int:
    """How many tensor arguments `n` has (any rank)."""
    import torch
    import torch.fx

    count = 0
    for a in [*n.args, *n.kwargs.values()]:
        for x in (a if isinstance(a, (list, tuple)) else [a]):
            if isinstance(x, torch.fx.Node) and isinstance(_val(x), torch.Tensor):
                count += 1
    return count


def dim_order_copies(program: Any, findings: list[Any],
                     stored: dict[str, tuple[int, ...]] | None = None) -> dict[str, dict[str, Any]]:
    """Edit `program` (the lowered ExportedProgram, in place) so none of `findings`' layout mismatches is
    left; {node: {"rule", "copies"}} for every node that got copies (empty: nothing to do). `stored`: the dim
    order the serialised program gives each node's output (preflight.program_view.stored_dim_orders)."""
    stored = stored or {}
    g = program.graph_module.graph
    nodes = {n.name: n for n in g.nodes}
    users = set(program.graph_signature.user_inputs)
    for n in g.nodes:                            # parameters, buffers, lifted constants
        if n.op == "placeholder" and n.name not in users:
            n.meta["cmlens_constant"] = True
    done: dict[str, dict[str, Any]] = {}
    for f in layout_findings(findings):
        n = nodes.get(f.node)
        if n is None or f.node in done:
            continue
        made = _fix(g, n, f.rule, stored)
        if made:
            done[f.node] = {"rule": f.rule, "op": f.op, "copies": made}
    if done:
        program.graph_module.recompile()
    return done
