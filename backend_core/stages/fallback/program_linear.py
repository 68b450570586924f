"""--keep-going's workaround for a float `linear` left in the lowered program (the pre-flight's missing-kernel
on `aten::linear.out`): ExecuTorch's portable library has addmm, mm, permute_copy and view_copy but no linear,
so no runner can load a program holding one. nn.LSTM and nn.GRU are the usual source: the Cortex-M backend
leaves them in float and to_edge decomposes them into a linear per gate block and time step.

Each float linear(x, W, b) becomes, on the lowered program, what ATen's own linear computes:
addmm(b, x, permute_copy(W, [1, 0])) (mm without a bias), with view_copy to two dims and back when x has
another rank. Same values on the host (ATen's linear is that addmm); on the target the portable kernels
compute the same sums. The cost: one transpose per weight (a copy of it, no arithmetic), shared by every
linear that reads that weight."""
from __future__ import annotations

from typing import Any

from backend_core.stages.fallback.layout_rewrites import fake_val

NAME = "linear_as_addmm"
DESCRIPTION = ("every float linear the lowered program held (no portable kernel: aten::linear.out) written as "
               "permute_copy(W) + addmm (mm without a bias), as ATen computes it (on the lowered program; same "
               "values)")
LINEAR_OP = "aten::linear.out"


def _val(n: Any) -> Any:
    return n.meta.get("val") if hasattr(n, "meta") else None


def _call(g: Any, target: Any, args: tuple, like: Any, val: Any, *, compute: bool = False) -> Any:
    """A new node before `like`, with `like`'s source line and module and the fake value `val`. Only the addmm
    (the linear's arithmetic) keeps its origin and debug handle: an ETDump then reports the linear's value there
    and the fallback is traced to the module; the transpose and views are the tool's own."""
    with g.inserting_before(like):
        n = g.call_function(target, args)
    keep = ("stack_trace", "nn_module_stack", "source_fn_stack") + (("from_node", "debug_handle") if compute else ())
    n.meta = {**{k: v for k, v in like.meta.items() if k in keep}, "val": val}
    return n


def _as_addmm(g: Any, n: Any, transposed: dict[Any, Any]) -> tuple[Any, Any]:
    """The nodes replacing linear node `n`: (the addmm/mm, the node giving the linear's output). One transpose
    per weight (`transposed`, weight node -> its permute_copy), made before the weight's first linear: an
    unrolled LSTM's 49 steps share one W_hh, and a transpose per step cost 3/4 of lstm_kws' instructions."""
    from executorch.exir.dialects._ops import ops as exir_ops

    edge = exir_ops.edge.aten
    x, w = n.args[0], n.args[1]
    b = n.args[2] if len(n.args) > 2 else n.kwargs.get("bias")
    xv, wv, out_v = _val(x), _val(w), _val(n)
    k, m = int(wv.shape[1]), int(wv.shape[0])
    if w not in transposed:
        transposed[w] = _call(g, edge.permute_copy.default, (w, [1, 0]), n,
                              fake_val(lambda t: t.permute(1, 0).contiguous(), wv))
    wt = transposed[w]
    x2 = x
    if xv.dim() != 2:
        x2 = _call(g, edge.view_copy.default, (x, [-1, k]), n, fake_val(lambda t: t.reshape(-1, k), xv))
    rows = _val(x2).shape[0]
    y2_val = fake_val(lambda t: t.new_empty((rows, m)), _val(x2))
    if b is not None:
        y2 = _call(g, edge.addmm.default, (b, x2, wt), n, y2_val, compute=True)
    else:
        y2 = _call(g, edge.mm.default, (x2, wt), n, y2_val, compute=True)
    if xv.dim() == 2:
        return y2, y2
    return y2, _call(g, edge.view_copy.default, (y2, [int(s) for s in out_v.shape]), n, out_v)


def _is_float_linear(n: Any) -> bool:
    import torch

    v = _val(n)
    return (n.op == "call_function" and "aten.linear" in str(n.target) and isinstance(v, torch.Tensor)
            and v.dtype.is_floating_point and len(n.args) >= 2 and _val(n.args[1]) is not None
            and _val(n.args[1]).dim() == 2)


def linear_as_addmm(program: Any, findings: list[Any]) -> dict[str, dict[str, Any]]:
    """Edit `program` in place for the certain missing-kernel findings on aten::linear.out;
    {node: {"rule", "op", "became"}}."""
    named = {f.node for f in findings if f.certain and f.rule == "missing-kernel" and f.op == LINEAR_OP}
    if not named:
        return {}
    g = program.graph_module.graph
    done: dict[str, dict[str, Any]] = {}
    transposed: dict[Any, Any] = {}
    for n in list(g.nodes):
        if n.name not in named or not _is_float_linear(n):
            continue
        mm, out = _as_addmm(g, n, transposed)
        name = n.name
        n.replace_all_uses_with(out)
        g.erase_node(n)
        # The addmm takes the linear's name: the module's whole decomposition shares one debug handle, so the
        # name is what traces it back, stage to stage, to the op the user wrote. Set directly: the graph's
        # namespace keeps an erased name reserved, so no later node can take it.
        mm.name = name
        done[name] = {"rule": "missing-kernel", "op": LINEAR_OP, "became": str(mm.target).split(".")[-2]}
    if done:
        g.lint()
        program.graph_module.recompile()
    return done
