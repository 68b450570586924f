"""Write a subgraph of a float ExportedProgram as one standalone Python file that quantizes and
lowers it with plain ExecuTorch (torch, torchao, executorch; no cmlens): the text a user can file
upstream. Tensors entering the subgraph become inputs with the recorded shape, dtype and memory
format; parameters become random parameters of the same shape and layout."""
from __future__ import annotations

import operator
from typing import Any

CL4 = (0, 2, 3, 1)


def _dim_order(val: Any) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in val.dim_order())
    except Exception:  # noqa: BLE001 - ambiguous strides: contiguous is what the tensor reads as
        return tuple(range(val.dim()))


def tensor_expr(val: Any, maker: str = "torch.randn", positive: bool = False,
                like: Any = None) -> str:
    """An expression making a tensor with `val`'s shape, dtype and dim order; `positive` for buffers
    such as a batch norm's running variance (random negative values make NaNs in calibration).
    `like` (the model's own tensor) gives random values its mean and spread: plain randn weights
    grow the activations layer by layer until a deep graph calibrates on inf and NaN."""
    shape = list(val.shape)
    dtype = str(val.dtype)
    if val.dtype.is_floating_point and positive:
        base = f"(torch.rand({shape}) + 0.5)"
    elif val.dtype.is_floating_point and _constant(like) is not None:     # e.g. a batch norm's weight of ones
        base = f"torch.full({shape}, {float(f'{_constant(like):.3g}')!r})"     # 1.0, not 1: an int64 tensor
    elif val.dtype.is_floating_point:
        base = f"{maker}({shape}" + ("" if dtype == "torch.float32" else f", dtype={dtype}") + ")"
        base += _scale(like)
    elif val.dtype == __import__("torch").bool:
        base = f"torch.rand({shape}) > 0.5"
    elif like is not None and like.numel():      # an index buffer: stay inside the real range
        base = f"torch.randint({int(like.min())}, {int(like.max()) + 1}, {shape}, dtype={dtype})"
    else:
        base = f"torch.randint(-8, 8, {shape}, dtype={dtype})"
    order = _dim_order(val)
    if order == tuple(range(len(shape))):
        return base
    if order == CL4:                      # parenthesised: the base may end in "* std + mean" or "> 0.5"
        return f"({base}).to(memory_format=torch.channels_last)" if " " in base else \
            f"{base}.to(memory_format=torch.channels_last)"
    # any other order: make the permuted-contiguous tensor and permute it back (same strides)
    inv = [order.index(i) for i in range(len(order))]
    permuted = [shape[d] for d in order]
    return f"{maker}({permuted}).permute({inv})"


def _input_expr(val: Any, like: Any) -> str:
    """An input of the file: integer inputs (token ids, indices) inside the range the model saw; a float
    input with its own spread (a mask of zeros and -inf is a constant, not randn)."""
    if like is None or getattr(like, "dtype", None) != val.dtype:
        return tensor_expr(val)
    if not val.dtype.is_floating_point and like.numel() and val.dtype != __import__("torch").bool:
        return tensor_expr(val, like=like)
    if val.dtype.is_floating_point and _constant(like) is None and bool(like.isfinite().all()):
        return tensor_expr(val, like=like)
    return tensor_expr(val)


def _constant(like: Any) -> float | None:
    """The value of a float tensor whose elements are all equal; None otherwise."""
    if like is None or not getattr(like, "is_floating_point", lambda: False)() or like.numel() < 2:
        return None
    t = like.detach()
    return float(t.flatten()[0]) if bool((t == t.flatten()[0]).all()) else None


def _scale(like: Any) -> str:
    """" * std + mean" of a float tensor (3 significant digits), "" when it is about randn's own."""
    if like is None or not getattr(like, "is_floating_point", lambda: False)() or like.numel() < 2:
        return ""
    std, mean = float(like.detach().float().std()), float(like.detach().float().mean())
    if std != std or mean != mean:
        return ""
    text = "" if abs(std - 1) < 0.05 else f" * {std:.3g}"
    return text + ("" if abs(mean) < 0.05 * max(std, 1e-12) else f" + {mean:.3g}")


def _const(a: Any) -> str:
    import torch

    if isinstance(a, torch.device):
        return f"torch.device({str(a)!r})"
    if isinstance(a, (torch.dtype, torch.memory_format, torch.layout)):
        return str(a)
    if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
        return f"float({str(a)!r})"
    return repr(a)


def _is_tuple(n: Any) -> bool:
    """A multi-output op (split, max_pool with indices): its getitems are the tensors."""
    return isinstance(n.meta.get("val"), (list, tuple))


class _Writer:
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def arg(self, a: Any) -> str:
        if hasattr(a, "op") and hasattr(a, "name"):
            return self.names[a.name]
        if isinstance(a, (list, tuple)):
            inner = ", ".join(self.arg(x) for x in a)
            return f"[{inner}]" if isinstance(a, list) else f"({inner}{',' if len(a) == 1 else ''})"
        return _const(a)


def traced_values(ep: Any, example_inputs: tuple) -> dict[str, Any]:
    """Every node's value on the model's own example inputs, by node name: an input of a reproducer gets
    its real range from it (token ids inside the vocabulary, an index tensor inside its table), not
    randint(-8, 8). {} when the export does not run here."""
    import torch

    values: dict[str, Any] = {}
    try:
        gm = ep.module(check_guards=False)

        class Recorder(torch.fx.Interpreter):
            def run_node(self, n: Any) -> Any:
                out = super().run_node(n)
                if isinstance(out, torch.Tensor):
                    values[n.name] = out.detach()
                return out

        with torch.no_grad():
            Recorder(gm).run(*example_inputs)
    except Exception:  # noqa: BLE001 - ranges are a refinement; a file is written without them
        return values
    for spec, n in zip(ep.graph_signature.input_specs, [n for n in ep.graph.nodes if n.op == "placeholder"]):
        if spec.arg.name in values and spec.arg.name != n.name:
            values[n.name] = values[spec.arg.name]
    return values


def subgraph_source(ep: Any, keep: set[str], output: str, *, header: str, target: str, expected: str,
                    versions: dict[str, str], flow: str = "legacy", traced: dict[str, Any] | None = None) -> str:
    """The file for the nodes `keep` (names in `ep.graph`) computing `output`; every other node
    feeding them becomes an input (a user tensor, in the range `traced` (traced_values) recorded) or a
    parameter (a weight). A kept node that no
    kept node uses is returned too: export would drop it as dead code, and a failure can depend on
    an op downstream of the failing one (its other users, a sibling of a split)."""
    keep = set(keep)
    for n in ep.graph.nodes:     # a getitem of a node left out is an input itself (a tensor, not a tuple)
        if n.name in keep and n.target is operator.getitem and n.args[0].name not in keep and n.name != output:
            keep.discard(n.name)
    sig = ep.graph_signature
    params = {**sig.inputs_to_parameters, **sig.inputs_to_buffers}
    order = [n for n in ep.graph.nodes if n.name in keep]
    inputs: list[Any] = []
    weights: list[Any] = []
    for n in order:
        for a in n.all_input_nodes:
            if a.name in keep or a in inputs or a in weights:
                continue
            (weights if a.name in params else inputs).append(a)
    names: dict[str, str] = {}
    for i, a in enumerate(inputs):
        names[a.name] = f"x{i}"
    for i, a in enumerate(weights):
        names[a.name] = f"self.w{i}"
    w = _Writer(names)
    used = {a.name for n in order for a in n.all_input_nodes}
    extra = [n for n in order if n.name not in used and n.name != output and not _is_tuple(n)]
    body = []
    for i, n in enumerate(order):
        names[n.name] = "out" if n.name == output else f"t{i}"
        if n.target is operator.getitem:
            rhs = f"{w.arg(n.args[0])}[{n.args[1]}]"
        else:
            args = [w.arg(a) for a in n.args] + [f"{k}={w.arg(v)}" for k, v in n.kwargs.items()]
            rhs = f"torch.ops.{n.target}({', '.join(args)})"
        body.append(f"        {names[n.name]} = {rhs}")
    buffers = set(sig.inputs_to_buffers)
    values = {**ep.state_dict, **getattr(ep, "constants", {})}
    init = [f"        self.w{i} = torch.nn.Parameter("
            f"{tensor_expr(a.meta['val'], positive=a.name in buffers, like=values.get(params[a.name]))}, "
            "requires_grad=False)" for i, a in enumerate(weights)]
    traced = traced or {}
    ins = ", ".join(_input_expr(a.meta["val"], traced.get(a.name)) for a in inputs)
    explicit = flow == "explicit"
    lines = [
        f'"""{header}"""',
        "import torch",
        "from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config",
        "from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager",
        "from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer",
        "from executorch.backends.cortex_m.target_config import CortexMTargetConfig",
        "from executorch.exir import to_edge",
        "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e",
        "",
        "class Repro(torch.nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        *init,
        "",
        f"    def forward(self, {', '.join(names[a.name] for a in inputs)}):",
        *body,
        "        return " + ", ".join(["out", *(names[n.name] for n in extra)]),
        "",
        "torch.manual_seed(0)",
        f"inputs = ({ins},)",
        "prepared = prepare_pt2e(torch.export.export(Repro().eval(), inputs).module(check_guards=False), "
        f"CortexMQuantizer({'use_explicit_layout=True' if explicit else ''}))",
        "for _ in range(4):",
        "    prepared(*[torch.randn_like(t) if t.is_floating_point() else t for t in inputs])",
        "edge = to_edge(torch.export.export(convert_pt2e(prepared), inputs), compile_config=cortex_m_edge_compile_config())",
        f"CortexMPassManager(edge.exported_program(), target_config=CortexMTargetConfig.from_target_string({target!r})"
        + (", use_explicit_layout=True" if explicit else "") + ").transform()",
        "print('lowered without error: the failure no longer reproduces')",
        "",
        "# " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"# Expected: {expected}",
    ]
    return "\n".join(lines) + "\n"
