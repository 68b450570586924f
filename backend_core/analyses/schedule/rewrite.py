"""Rewrite a lowered program so that its prefix runs patch by patch.

For each of the P×Q output patches of the split tensor: slice the input box its receptive field
needs (`aten.slice_copy`), run each prefix op on its own box (convs with their own padding where the
patch touches the border on both sides of an axis, else `cortex_m.pad` with the input's zero point
on the border side only: interior patches read real pixels, never padding), then concatenate the
patches (`aten.cat`, a row of patches at a time) into the split tensor. Every op is the lowering's
own node with its own weights, scales and zero points; new convs get CMSIS-NN scratch sized for their
patch by ExecuTorch's own `required_cmsis_nn_buffer_sizes`. Optionally the program takes the int8
tensor its leading quantize_per_tensor made, with that op's scale and zero point.

That is the portable road (copies="portable"). The default road (copies="cmlens") copies each window once
with the project's own `cmlens::window` (border padding at the conv's input zero point included, so the
conv runs with padding 0) and writes the patches into the split tensor with one `cmlens::tiles`
(own_ops.py; kernels/ops on the target): 1.08x the plain program's QEMU instructions on mv2 instead of
1.27x. A split may name several stages ("A@4x4,B@2x2"): stage k patches the ops between stage k-1's
split tensor, assembled whole, and its own."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.analyses.schedule.geometry import (
    Box, conv_pads, folds, hw, input_boxes, kind_of, needed_boxes, target_of, val_of)
from backend_core.analyses.schedule.prefix import Prefix, split_candidates, user_input


@dataclass(frozen=True)
class InputQuant:
    """The int8 input a scheduled program takes instead of the float one: q = round(x / scale) + zp."""
    scale: float
    zero_point: int
    qmin: int
    qmax: int

    def to_dict(self) -> dict[str, Any]:
        return {"dtype": "int8", "scale": self.scale, "zero_point": self.zero_point,
                "qmin": self.qmin, "qmax": self.qmax}


def spans(size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` nearly equal half-open ranges covering [0, size)."""
    edges = [round(i * size / parts) for i in range(parts + 1)]
    return [(edges[i], edges[i + 1]) for i in range(parts)]


def int8_input(ep: Any) -> InputQuant:
    """Make the program's input the int8 tensor its leading quantize_per_tensor produced (in place)."""
    x = user_input(ep)
    users = list(x.users)
    if len(users) != 1 or target_of(users[0]) != "cortex_m.quantize_per_tensor.default":
        raise BadInputError(f"The program's input {x.name} is not quantized by one leading quantize_per_tensor.",
                            "Keep the float input (--input-dtype float32) for this model.")
    q = users[0]
    _, scale, zp, qmin, qmax, _dtype = q.args[:6]
    x.meta["val"] = val_of(q)
    q.replace_all_uses_with(x)
    ep.graph.erase_node(q)
    return InputQuant(float(scale), int(zp), int(qmin), int(qmax))


class _Builder:
    """Emits the nodes of one scheduled prefix before the split node."""

    def __init__(self, ep: Any, prefix: Prefix, target: str, copies: str = "cmlens") -> None:
        from executorch.exir.dialects._ops import ops as exir_ops

        from backend_core.common.cpus import target_config

        self.ep, self.prefix, self.graph = ep, prefix, ep.graph
        self.ops = exir_ops.edge
        self.backend = target_config(target).backend
        self.fake_mode = val_of(prefix.split).fake_mode
        self.own = copies == "cmlens"      # cmlens::window/tiles (own_ops.py) instead of portable slice/pad/cat
        self.pads = 0                      # explicit cortex_m.pad nodes made
        self.windows = 0                   # cmlens::window nodes made

    def node(self, target: Any, args: tuple, like: Any | None = None, kwargs: dict | None = None) -> Any:
        n = self.graph.create_node("call_function", target, args, kwargs or {})
        if like is not None:
            n.meta.update({k: v for k, v in like.meta.items() if k in ("stack_trace", "nn_module_stack",
                                                                       "debug_handle", "from_node")})
        with self.fake_mode:
            n.meta["val"] = target(*[_val(a) for a in args], **(kwargs or {}))
        return n

    def window(self, src: Any, have: Box, box: Box, pad_value: int) -> Any:
        """cmlens::window of `src` (holding box `have`): box `box` of the whole tensor, `pad_value` outside it."""
        from backend_core.analyses.schedule.own_ops import edge_ops

        self.windows += 1
        rel = [box[0] - have[0], box[1] - have[0], box[2] - have[2], box[3] - have[2]]
        return self.node(edge_ops().window.default, (src, rel, int(pad_value)))

    def crop(self, src: Any, have: Box, want: Box) -> Any:
        """`src` (holding box `have`) cut to `want`, channels-last (own ops: one cmlens::window).
        Portable: ExecuTorch's portable slice_copy checks ExecuTorch's portable slice_copy checks
        that input and output share a dim order and indexes by logical strides (op_slice_copy.cpp), so a
        channels-last tensor is cloned to contiguous first (`_clone_dim_order`, the portable dim-order
        copy), sliced along H, then W, and cloned back to channels-last for the cortex_m op that reads it."""
        if self.own:
            return src if want == have and _order(src) == CHANNELS_LAST else self.window(src, have, want, 0)
        out = src
        if (want[0], want[1]) != (have[0], have[1]) or (want[2], want[3]) != (have[2], have[3]):
            out = self.layout(out, CONTIGUOUS)
            if (want[0], want[1]) != (have[0], have[1]):
                out = self.node(self.ops.aten.slice_copy.Tensor, (out, 2, want[0] - have[0], want[1] - have[0], 1))
            if (want[2], want[3]) != (have[2], have[3]):
                out = self.node(self.ops.aten.slice_copy.Tensor, (out, 3, want[2] - have[2], want[3] - have[2], 1))
        return self.layout(out, CHANNELS_LAST)

    def layout(self, node: Any, order: list[int]) -> Any:
        """`node` in dim order `order` (itself when it already is)."""
        if _order(node) == order:
            return node
        return self.node(self.ops.dim_order_ops._clone_dim_order.default, (node,), kwargs={"dim_order": order})

    def conv(self, node: Any, box: Box, got: Any, have: Box) -> Any:
        """The conv of one patch, reading `got` (holding box `have` of its input). Own ops: the conv reads
        `got` itself when it holds exactly the window and the conv's own padding stands for the border,
        else one cmlens::window holding the padded window (conv padding 0). Portable: a crop, then
        cortex_m.pad on the border side the conv cannot pad itself."""
        from executorch.backends.cortex_m.passes.passes_utils import to_physical_order

        (_, want), = input_boxes(node, box)
        top, bottom, left, right = conv_pads(node, box)
        fold_h, fold_w = folds(node, box)
        if self.own:
            if want == have and fold_h and fold_w and _order(got) == CHANNELS_LAST:
                return self._conv_node(node, got, [top, left])
            padded = (want[0] - top, want[1] + bottom, want[2] - left, want[3] + right)
            return self._conv_node(node, self.window(got, have, padded, input_zero_point(node)), [0, 0])
        src = self.crop(got, have, want)
        if not (fold_h and fold_w):
            pre = [0, 0, 0 if fold_h else top, 0 if fold_w else left]
            post = [0, 0, 0 if fold_h else bottom, 0 if fold_w else right]
            v = _val(src)
            src = self.node(self.ops.cortex_m.pad.default,
                            (src, to_physical_order(pre, v), to_physical_order(post, v), input_zero_point(node)))
            self.pads += 1
        return self._conv_node(node, src, [top if fold_h else 0, left if fold_w else 0])

    def _conv_node(self, node: Any, src: Any, padding: list[int]) -> Any:
        scratch = self.graph.create_node("call_function", node.args[-1].target, node.args[-1].args)
        scratch.meta["val"] = node.args[-1].meta["val"]
        args = (src, *node.args[1:4], padding, *node.args[5:-1], scratch)
        new = self.node(node.target, args, like=node)
        self._size_scratch(new, scratch)
        return new

    def _size_scratch(self, conv: Any, scratch: Any) -> None:
        import torch
        from executorch.backends.cortex_m.passes.scratch_buffer_sizes import required_cmsis_nn_buffer_sizes

        sizes = required_cmsis_nn_buffer_sizes(conv, self.backend)
        if sizes:
            scratch.args = (((int(sizes[-1]),), torch.uint8),)
            scratch.meta["val"] = torch.empty((int(sizes[-1]),), dtype=torch.uint8, device="meta")

    def patch(self, x: Any, out_box: Box) -> Any:
        """The nodes of one patch; returns the node holding the split tensor's `out_box`."""
        need = needed_boxes(self.prefix.nodes, self.prefix.split, out_box)
        h, w = hw(x)
        made: dict[Any, tuple[Any, Box]] = {x: (x, (0, h, 0, w))}
        for node in self.prefix.nodes:
            box = need.get(node)
            if box is None:
                continue
            if kind_of(node) == "conv":
                made[node] = (self.conv(node, box, *made[node.args[0]]), box)
            else:
                ins = {src: self.crop(*made[src], want) for src, want in input_boxes(node, box)}
                args = tuple(ins.get(a, a) if hasattr(a, "op") else a for a in node.args)
                made[node] = (self.node(node.target, args, like=node), box)
        return made[self.prefix.split][0]


CONTIGUOUS, CHANNELS_LAST = [0, 1, 2, 3], [0, 2, 3, 1]


def _order(node: Any) -> list[int]:
    return list(val_of(node).dim_order())


def contiguous_input(x: Any) -> None:
    """The program's input in the contiguous (NCHW) dim order: slices of it are then valid on the target
    (a channels-last one would need a whole-input copy first). The caller gives the same bytes in NCHW."""
    v = val_of(x)
    x.meta["val"] = v.contiguous() if v.dim() == 4 else v
    for u in x.users:
        if target_of(u) == "cortex_m.quantize_per_tensor.default":     # elementwise: keeps its input's order
            u.meta["val"] = val_of(u).contiguous()


def input_zero_point(conv: Any) -> int:
    """The conv's input zero point: -input_offset (its index differs: depthwise has depth_multiplier first)."""
    names = [a.name for a in conv.target._schema.arguments]
    return -int(conv.args[names.index("input_offset")])


def _val(a: Any) -> Any:
    if isinstance(a, (list, tuple)):
        return type(a)(_val(b) for b in a)
    return val_of(a) if hasattr(a, "op") else a


@dataclass
class Rewritten:
    program: Any                       # the scheduled ExportedProgram (a copy)
    input_quant: InputQuant | None
    pads: int                          # explicit pad ops (portable copies: patches that touch one border)
    slices: int
    cats: int
    windows: int = 0                   # cmlens::window ops (own copies)
    tiles: int = 0                     # cmlens::tiles ops (one per stage)
    stages: list[tuple[str, tuple[int, int]]] = field(default_factory=list)
    patched: tuple[str, ...] = ()      # the ops that run once per patch (the window marks them on the graph)


COPIES = ("cmlens", "portable")


def parse_stages(split: str, grid: tuple[int, int]) -> list[tuple[str, tuple[int, int]]]:
    """"A" | "A,B" | "A@RxC,B@RxC": the split node of each stage, in order, with its patch grid (`grid`
    where the stage names none). Stage k patches the ops between stage k-1's split tensor (assembled
    whole) and its own; the first stage starts at the program's input."""
    out = []
    for part in [p.strip() for p in split.split(",") if p.strip()]:
        name, _, g = part.partition("@")
        try:
            g2 = tuple(int(v) for v in g.lower().split("x")) if g else tuple(grid)
        except ValueError:
            g2 = ()
        if len(g2) != 2:
            raise BadInputError(f"{part!r} is not a stage: expected SPLIT or SPLIT@RxC (e.g. {name}@4x4).",
                                "Write the schedule's split as \"A\", \"A,B\" or \"A@4x4,B@2x2\".")
        out.append((name.strip(), (int(g2[0]), int(g2[1]))))
    return out


def find_prefix(ep: Any, split: str, start: Any | None = None) -> Prefix:
    cands, why = split_candidates(ep, start)
    for p in cands:
        if p.name == split:
            return p
    names = ", ".join(p.name for p in cands[-6:]) or "none"
    raise BadInputError(f"{split} is not a valid split point of this program ({why}).",
                        f"Pick one of the valid split nodes (last ones: {names}).")


def schedule_program(ep: Any, split: str, grid: tuple[int, int], target: str, *,
                     int8: bool = False, copies: str = "cmlens") -> Rewritten:
    """A copy of `ep` whose ops up to `split` run as grid[0]×grid[1] patches (see the module doc);
    `split` may name several stages ("A,B", "A@4x4,B@2x2": parse_stages). copies: "cmlens" (the
    project's window/tiles ops, own_ops.py) or "portable" (slice_copy, cortex_m.pad, cat)."""
    ep = copy.deepcopy(ep)
    quant = int8_input(ep) if int8 else None
    stages = parse_stages(split, grid)
    if not stages:                     # no patches: the int8 input alone
        ep.graph_module.recompile()
        return Rewritten(ep, quant, 0, 0, 0)
    if copies not in COPIES:
        raise BadInputError(f"copies={copies!r} is not one of {', '.join(COPIES)}.", "Use cmlens or portable.")
    totals = Rewritten(ep, quant, 0, 0, 0, stages=stages)
    start = None
    for k, (name, g) in enumerate(stages):
        start = _stage(ep, name, g, target, quant is None and k == 0, start, copies, totals)
    ep.graph.eliminate_dead_code()
    ep.graph_module.recompile()
    totals.slices = sum(1 for n in ep.graph.nodes if n.op == "call_function" and "slice_copy" in target_of(n))
    return totals


def _stage(ep: Any, split: str, grid: tuple[int, int], target: str, float_input: bool, start: Any | None,
           copies: str, totals: Rewritten) -> Any:
    """Rewrite one stage in place; returns the node that now holds its split tensor whole."""
    prefix = find_prefix(ep, split, start)
    h, w = hw(prefix.split)
    rows, cols = grid
    if rows > h or cols > w or rows < 1 or cols < 1:
        raise BadInputError(f"A {rows}×{cols} patch grid does not fit {split}'s {h}×{w} output.",
                            f"Use at most {h}×{w} patches for this split point, or split later.")
    if start is None:
        x = user_input(ep)
        contiguous_input(x)
        lead = next(iter(x.users))
        if float_input and len(x.users) == 1 and target_of(lead) == "cortex_m.quantize_per_tensor.default" \
                and lead is not prefix.split:
            # a float input is quantized whole (a quarter of its bytes) and the int8 copy is patched: float
            # patches would cost 4x the bytes per halo row, and the float buffer is there anyway
            prefix = Prefix(prefix.split, [n for n in prefix.nodes if n is not lead])
            x = lead
    else:
        x = start
    b = _Builder(ep, prefix, target, copies)
    with ep.graph.inserting_before(prefix.split):
        if b.own:
            patches = [b.patch(x, (h0, h1, w0, w1)) for h0, h1 in spans(h, rows) for w0, w1 in spans(w, cols)]
            from backend_core.analyses.schedule.own_ops import edge_ops

            whole = patches[0] if len(patches) == 1 else b.node(edge_ops().tiles.default, (patches, cols))
            totals.tiles += len(patches) > 1
            whole = b.layout(whole, _order(prefix.split))
        else:
            whole = _portable_assemble(b, x, h, w, rows, cols, totals)
    prefix.split.replace_all_uses_with(whole)
    for node in reversed(prefix.nodes):
        scratch = [a for a in node.args if hasattr(a, "op") and kind_of(a) == "plumbing"]
        ep.graph.erase_node(node)
        for s in scratch:
            if not s.users:
                ep.graph.erase_node(s)
    totals.pads += b.pads
    totals.windows += b.windows
    totals.patched += tuple(n.name for n in prefix.nodes)
    return whole


def _portable_assemble(b: _Builder, x: Any, h: int, w: int, rows: int, cols: int, totals: Rewritten) -> Any:
    # portable cat indexes by logical strides too (channels-last patches came out wrong on QEMU:
    # FACTS, the U-Net): patches are concatenated contiguous and the split tensor cloned back
    strips = []
    for h0, h1 in spans(h, rows):
        tiles = [b.patch(x, (h0, h1, w0, w1)) for w0, w1 in spans(w, cols)]
        if len(tiles) > 1:
            tiles = [b.node(b.ops.aten.cat.default, ([b.layout(t, CONTIGUOUS) for t in tiles], 3))]
            totals.cats += 1
        strips.append(tiles[0])
    if len(strips) > 1:
        strips = [b.node(b.ops.aten.cat.default, ([b.layout(t, CONTIGUOUS) for t in strips], 2))]
        totals.cats += 1
    return b.layout(strips[0], _order(b.prefix.split))
