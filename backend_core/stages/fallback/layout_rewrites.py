"""Value-preserving edits of the float export that keep ExecuTorch's lowering in the layouts eager had.
to_edge turns views into copies with contiguous outputs and writes split pieces contiguous, to_executorch
turns view copies into memory views read as contiguous, and several kernels read buffers by logical sizes
(portable cat, CMSIS-NN add/mul/transpose): on a channels-last model the program then fails or computes
wrong values on the target with no error. Each edit inserts the dim-order copies (or smaller views) that
make every kernel see the layout it assumes; none changes a value. The pre-flight findings that call for
each are in backend_core.lowering.lower.keep_going; the registry of edits is backend_core.stages.fallback.rewrites."""
from __future__ import annotations

import copy
import math
import operator
from typing import Any, Callable

def fake_val(fn: Callable[..., Any], val: Any, *args: Any) -> Any:
    """`fn(val, *args)` on the program's fake tensors (a new node needs its meta["val"])."""
    from torch._guards import detect_fake_mode

    mode = detect_fake_mode([val])
    if mode is None:
        return fn(val, *args)
    with mode:
        return fn(val, *args)


def _copy_before(g: Any, user: Any, src: Any, memory_format: Any) -> Any:
    """A dim-order copy of `src` in `memory_format`, placed right before `user` (which is to read it)."""
    import torch

    with g.inserting_before(user):
        c = g.call_function(torch.ops.aten.clone.default, (src,), {"memory_format": memory_format})
    c.meta = {**src.meta, "val": fake_val(lambda v: v.clone(memory_format=memory_format), src.meta["val"])}
    return c


def _copy_after(g: Any, n: Any, memory_format: Any) -> Any:
    """Every user of `n` reads a dim-order copy of it in `memory_format` instead."""
    import torch

    with g.inserting_after(n):
        back = g.call_function(torch.ops.aten.clone.default, (n,), {"memory_format": memory_format})
    back.meta = {**n.meta, "val": fake_val(lambda v: v.clone(memory_format=memory_format), n.meta["val"])}
    n.replace_all_uses_with(back, delete_user_cb=lambda u: u is not back)
    return back


def _channels_last_4d(val: Any) -> bool:
    """A 4-D tensor whose channels-last layout differs from NCHW (C > 1 and H * W > 1)."""
    import torch

    return (isinstance(val, torch.Tensor) and val.dim() == 4 and val.shape[1] > 1
            and val.shape[2] * val.shape[3] > 1 and val.is_contiguous(memory_format=torch.channels_last))


def _layout_matters(val: Any) -> bool:
    """A 4-D tensor whose NCHW and NHWC layouts hold different bytes (C > 1 and H * W > 1)."""
    import torch

    return isinstance(val, torch.Tensor) and val.dim() == 4 and val.shape[1] > 1 and val.shape[2] * val.shape[3] > 1


def _channels_last_order(val: Any) -> bool:
    """A 4-D tensor (C > 1, H * W > 1) whose strides run in channels-last order: a piece of a split of a
    channels-last tensor is not channels-last contiguous, but eager computes on it (and what it makes) in
    NHWC order."""
    import torch

    if not (isinstance(val, torch.Tensor) and val.dim() == 4 and val.shape[1] > 1 and val.shape[2] * val.shape[3] > 1):
        return False
    strides = val.stride()
    order = sorted(range(4), key=lambda d: (-strides[d], d))
    return order == [0, 2, 3, 1]


def cat_through_contiguous(ep: Any) -> tuple[Any, dict[str, str]]:
    """torch.cat([a, b], dim=1) of channels-last tensors written as
    torch.cat([a.contiguous(), b.contiguous()], 1).contiguous(memory_format=torch.channels_last).
    ExecuTorch's portable cat copies rows by the logical shape and ignores the dim order, so a
    channels-last concatenation along any dim but 0 gives scrambled values on the target with no
    error (the pre-flight's layout-ignored rule); through NCHW copies it is right, and what follows
    stays channels-last for the CMSIS-NN kernels. Same values; two dim-order copies per cat."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    for n in list(g.nodes):
        if n.op != "call_function" or n.target != aten.cat.default:
            continue
        val = n.meta.get("val")
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
        if not _channels_last_4d(val) or dim % 4 == 0:
            continue
        flat = [_copy_before(g, n, t, torch.contiguous_format) for t in n.args[0]]
        n.args = (flat, *n.args[1:])
        n.meta["val"] = fake_val(lambda *vs, dim=dim: torch.cat(list(vs), dim), flat[0].meta["val"],
                                 *[f.meta["val"] for f in flat[1:]])
        _copy_after(g, n, torch.channels_last)
    ep.graph_module.recompile()
    return ep, {}


def permute_through_contiguous(ep: Any) -> tuple[Any, dict[str, str]]:
    """x.permute(...) of a channels-last tensor written as x.contiguous().permute(...). to_edge makes the
    permute a copy whose output is contiguous, and ExecuTorch's portable permute_copy refuses an input of
    another dim order (the pre-flight's dim-order-mismatch: InvalidArgument on the target); from an NCHW
    copy both sides agree. Same values; one dim-order copy per such permute (timm's window partitions)."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    for n in list(g.nodes):
        if n.op != "call_function" or n.target != aten.permute.default:
            continue
        src = n.args[0]
        if not _channels_last_4d(getattr(src, "meta", {}).get("val")):
            continue
        n.args = (_copy_before(g, n, src, torch.contiguous_format), *n.args[1:])
    ep.graph_module.recompile()
    return ep, {}


_VIEWS = ("permute", "view", "reshape", "split", "split_with_sizes", "chunk", "slice", "transpose", "flatten",
          "unflatten", "squeeze", "unsqueeze", "select", "narrow")


def _op_base(n: Any) -> str:
    """"permute" for aten.permute.default; "" for anything but an op call."""
    if getattr(n, "op", "") != "call_function":
        return ""
    packet = getattr(n.target, "_overloadpacket", None)
    return str(getattr(packet, "__name__", "") or getattr(n.target, "__name__", ""))


def channels_last_into_convs(ep: Any) -> tuple[Any, dict[str, str]]:
    """A 2-D convolution fed straight by a view (a permute, reshape, chunk or split of the user's), or by
    any activation with NCHW strides in eager (ultralytics' DFL: a softmax of a transposed view), gets an
    explicit `.contiguous(memory_format=torch.channels_last)` input. In the float export such a view can
    still look channels-last, but to_edge turns views into copies with contiguous outputs, and the
    CMSIS-NN conv kernels refuse a contiguous input on the target (the pre-flight's
    cmsis-needs-channels-last). Same values; one dim-order copy per such conv."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    for n in list(g.nodes):
        if n.op != "call_function" or n.target != aten.conv2d.default:
            continue
        src = n.args[0]
        val = getattr(src, "meta", {}).get("val")
        base = _op_base(src.args[0] if src.op == "call_function" and src.target is operator.getitem else src)
        if not isinstance(val, torch.Tensor) or val.dim() != 4 or val.shape[1] < 2:
            continue
        # a view, or any NCHW-strided activation (YOLO's DFL: a softmax of a transposed view into a 1x1 conv)
        nchw = _layout_matters(val) and not val.is_contiguous(memory_format=torch.channels_last) \
            and src.op == "call_function"
        if base not in _VIEWS and not nchw:
            continue
        n.args = (_copy_before(g, n, src, torch.channels_last), *n.args[1:])
    ep.graph_module.recompile()
    return ep, {}


def channels_last_after_views(ep: Any) -> tuple[Any, dict[str, str]]:
    """A view whose result has channels-last strides in eager, followed by
    `.clone(memory_format=torch.channels_last)`: `x.permute(0, 3, 1, 2)` of NHWC memory (timm's window
    reverse) or `feat.view(B, -1, H, W)` of a channels-last conv output (timm's cascaded group attention).
    In eager the tensors such a view meets (a residual add, a split, a depthwise conv) agree with it; to_edge
    makes the view a copy with a contiguous output, and the CMSIS-NN add then adds an NCHW buffer to an
    NHWC one (the pre-flight's cmsis-ignores-dim-order: wrong values, no error), the conv refuses its input
    (cmsis-needs-channels-last) and portable kernels refuse mixed dim orders (dim-order-mismatch). The clone
    restores the layout eager had; a view or reshape of a 4-D tensor gets an NCHW base first
    (to_executorch makes it a memory view read as contiguous: the pre-flight's view-of-channels-last), and a
    split of a channels-last tensor is made on an NCHW copy and its pieces cloned back. Same values; one dim-order copy per such
    view, and per split and piece."""
    import torch

    aten = torch.ops.aten
    reshapes = {aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.alias.default,
                aten.flatten.using_ints, aten.unflatten.int}
    views = reshapes | {aten.permute.default, aten.transpose.int}
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    for n in list(g.nodes):
        if n.op != "call_function" or n.target not in views:
            continue
        was_channels_last = _channels_last_4d(n.meta.get("val"))
        src = n.args[0]
        if n.target in reshapes and _layout_matters(getattr(src, "meta", {}).get("val")):
            # to_executorch makes the view a memory view of its base read as contiguous: give it an NCHW base
            # (also when eager's base is NCHW: a CMSIS-NN conv before it writes NHWC in the program)
            flat = _copy_before(g, n, src, torch.contiguous_format)
            n.args = (flat, *n.args[1:])
            n.meta["val"] = fake_val(lambda v, n=n: n.target(v, *n.args[1:]), flat.meta["val"])
        if was_channels_last:
            _copy_after(g, n, torch.channels_last)
    _split_through_contiguous(g)
    ep.graph_module.recompile()
    return ep, {}


def _split_through_contiguous(g: Any) -> None:
    """A split of a channels-last tensor made on an NCHW copy, each piece cloned back to channels-last:
    to_edge's split_with_sizes_copy writes contiguous pieces, and its portable kernel refuses an input of
    another dim order (op_split_with_sizes_copy.cpp:44), while what follows expects eager's layout."""
    import torch

    aten = torch.ops.aten
    splits = {aten.split_with_sizes.default, aten.split.Tensor, aten.chunk.default}
    for n in list(g.nodes):
        if n.op != "call_function" or n.target not in splits:
            continue
        src = n.args[0]
        if not _channels_last_4d(getattr(src, "meta", {}).get("val")):
            continue
        n.args = (_copy_before(g, n, src, torch.contiguous_format), *n.args[1:])
        for piece in [u for u in n.users if u.op == "call_function" and u.target is operator.getitem]:
            if _channels_last_order(piece.meta.get("val")) and not _meets_nchw(piece):
                _copy_after(g, piece, torch.channels_last)


def _meets_nchw(node: Any) -> bool:
    """node is an operand of an element-wise op whose other operand is NCHW in eager (timm's cascaded heads
    add each head's contiguous output to the next channels-last chunk): cloning node to channels-last would
    make that op mix layouts."""
    import torch

    aten = torch.ops.aten
    for u in node.users:
        if u.op != "call_function" or u.target not in (aten.add.Tensor, aten.mul.Tensor, aten.sub.Tensor):
            continue
        for other in u.args[:2]:
            val = getattr(other, "meta", {}).get("val") if other is not node else None
            if isinstance(val, torch.Tensor) and val.dim() == 4 and not _channels_last_order(val) \
                    and val.shape[1] > 1 and val.shape[2] * val.shape[3] > 1:
                return True
    return False


def collapse_permutation(shape: list[int], perm: list[int]) -> tuple[list[int], list[int]]:
    """The same permutation on fewer dims: runs of dims that stay next to each other in the same order are
    merged ([B, nH, ws, nW, ws, C] with (0, 1, 3, 2, 4, 5) is [B*nH, ws, nW, ws*C] with (0, 2, 1, 3))."""
    runs: list[list[int]] = []
    for d in perm:
        if runs and d == runs[-1][-1] + 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    by_input = sorted(range(len(runs)), key=lambda r: runs[r][0])
    new_shape = [math.prod(shape[d] for d in runs[r]) for r in by_input]
    return new_shape, [by_input.index(r) for r in range(len(runs))]


def permute_in_fewer_dims(ep: Any) -> tuple[Any, dict[str, str]]:
    """A permute (or transpose) of more than 4 dims made on a view that merges the dims that stay together,
    then viewed back: `x.view(B, nH, ws, nW, ws, C).transpose(2, 3)` as
    `x.reshape(B * nH, ws, nW, ws * C).transpose(1, 2).reshape(B, nH, nW, ws, ws, C)`. ExecuTorch rewrites
    every int8 permute into cortex_m::transpose, whose kernel takes at most 4 dims (the pre-flight's
    cmsis-unsupported-rank: the method fails on the target). Same values."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    for n in list(g.nodes):
        if n.op != "call_function" or n.target not in (aten.permute.default, aten.transpose.int):
            continue
        val, src = n.meta.get("val"), n.args[0]
        if not isinstance(val, torch.Tensor) or val.dim() <= 4:
            continue
        rank = val.dim()
        if n.target == aten.permute.default:
            perm = [d % rank for d in n.args[1]]
        else:
            perm = list(range(rank))
            a, b = n.args[1] % rank, n.args[2] % rank
            perm[a], perm[b] = perm[b], perm[a]
        shape, small = collapse_permutation(list(src.meta["val"].shape), perm)
        if len(shape) > 4:
            continue                              # no 4-D form: left as it is (the pre-flight still says so)
        with g.inserting_before(n):
            flat = g.call_function(aten.reshape.default, (src, shape))
            moved = g.call_function(aten.permute.default, (flat, small))
            back = g.call_function(aten.reshape.default, (moved, list(val.shape)))
        flat.meta = {**n.meta, "val": fake_val(lambda v, shape=shape: v.reshape(shape), src.meta["val"])}
        moved.meta = {**n.meta, "val": fake_val(lambda v, small=small: v.permute(small), flat.meta["val"])}
        back.meta = {**n.meta, "val": fake_val(lambda v, val=val: v.reshape(list(val.shape)), moved.meta["val"])}
        n.replace_all_uses_with(back)
        g.erase_node(n)
    ep.graph_module.recompile()
    return ep, {}


_PORTABLE_NORMS = ("batch_norm.default", "group_norm.default", "layer_norm.default",
                   "_native_batch_norm_legit_no_training.default", "native_group_norm.default",
                   "native_layer_norm.default", "instance_norm.default")


def norms_through_contiguous(ep: Any) -> tuple[Any, dict[str, str]]:
    """bn(x) of a channels-last tensor written as bn(x.contiguous()).contiguous(memory_format=torch.channels_last)
    for every normalisation that stays on a portable kernel: ExecuTorch's portable batch norm, group norm and
    layer norm take only contiguous (NCHW) tensors and return InvalidArgument on the target otherwise (the
    pre-flight's needs-contiguous: a DenseNet's pre-activation batch norms, an FPN head's group norms). A
    batch norm straight after a conv that uses nothing else is left alone: the quantizer folds it into the
    conv (a copy in between would stop the fold). Same values; two dim-order copies per such norm."""
    import torch

    aten = torch.ops.aten
    ep = copy.deepcopy(ep)
    g = ep.graph_module.graph
    for n in list(g.nodes):
        if n.op != "call_function" or not str(n.target).endswith(_PORTABLE_NORMS):
            continue
        src = n.args[0]
        if not _channels_last_4d(getattr(src, "meta", {}).get("val")):
            continue
        folds = (str(n.target).endswith("batch_norm.default") and getattr(src, "target", None) == aten.conv2d.default
                 and len(src.users) == 1)
        if folds:
            continue
        n.args = (_copy_before(g, n, src, torch.contiguous_format), *n.args[1:])
        val = n.meta.get("val")
        if isinstance(val, torch.Tensor):
            n.meta["val"] = fake_val(lambda v: v.contiguous(), val)
            _copy_after(g, n, torch.channels_last)
        else:                            # a tuple (native_* ops): the first output's users read the copy
            for u in list(n.users):
                if u.target is operator.getitem and u.args[1] == 0:
                    u.meta["val"] = fake_val(lambda v: v.contiguous(), u.meta["val"])
                    _copy_after(g, u, torch.channels_last)
    ep.graph_module.recompile()
    return ep, {}
