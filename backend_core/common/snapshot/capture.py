"""Turn a live ExportedProgram or GraphModule into a GraphSnapshot, right after its stage ran
(before the next pass can mutate it)."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any, Iterable

from backend_core.common.snapshot.classify import classify, is_quant_boundary, op_base_name
from backend_core.common.snapshot.model import EdgeSnapshot, GraphSnapshot, NodeSnapshot, QParam
from backend_core.common.snapshot.qparams import (dtype_name, qparam_from_quant_args, qparam_from_quant_node,
                      requant_from_cortex_m_args)
from backend_core.common.snapshot.source import module_path_from_stack, user_source


_FUSABLE_ACTIVATIONS = frozenset({"relu", "relu_", "clamp", "clamp_", "hardtanh", "hardtanh_", "relu6"})


def target_name(target: Any) -> str:
    """The target as ExecuTorch prints it: `aten.convolution.default`, `cortex_m.quantized_conv2d.default`."""
    if isinstance(target, str):
        return target
    schema = getattr(target, "_schema", None)       # OpOverload and EdgeOpOverload
    if schema is not None and hasattr(schema, "overload_name"):
        # "aten::linear" + "" -> "aten.linear.default", as ExecuTorch prints targets
        return schema.name.replace("::", ".") + "." + (schema.overload_name or "default")
    name = getattr(target, "__name__", None)
    module = getattr(target, "__module__", "") or ""
    if name == "alloc" and module.endswith("exir.memory"):
        return "memory.alloc"
    return name or str(target)


def _val_dtype_shape(val: Any) -> tuple[str | None, tuple[int, ...] | None]:
    if isinstance(val, (list, tuple)):
        val = next((v for v in val if hasattr(v, "dtype")), None)
    if val is None or not hasattr(val, "dtype"):
        return None, None
    try:
        shape = tuple(int(s) for s in val.shape)
    except (TypeError, ValueError):
        shape = None
    return dtype_name(val.dtype), shape


def _val_dim_order(val: Any) -> tuple[int, ...] | None:
    """The dim order ExecuTorch will give this tensor in the .pte (from the fake tensor's strides):
    portable kernels check it (`tensors_have_same_dim_order`), so pre-flight needs it."""
    if isinstance(val, (list, tuple)):
        val = next((v for v in val if hasattr(v, "dtype")), None)
    stride = getattr(val, "stride", None)
    if stride is None or not hasattr(val, "dtype"):
        return None
    try:
        return _dim_order_of(tuple(int(s) for s in stride()))
    except Exception:  # noqa: BLE001 - a 0 stride or a symbolic one: no order known
        return None


@lru_cache(maxsize=4096)
def _dim_order_of(stride: tuple[int, ...]) -> tuple[int, ...]:
    """ExecuTorch's own stride -> dim order (what the emitter uses), once per distinct stride: it builds a
    class per call, and a snapshot asks for every node of every stage (a second of an 800-node lowering)."""
    from executorch.exir.tensor import dim_order_from_stride

    return tuple(int(d) for d in dim_order_from_stride(stride))


def _arg_text(a: Any, limit: int = 120) -> str:
    if hasattr(a, "op") and hasattr(a, "name"):
        return "%" + a.name
    if isinstance(a, float):
        return f"{a:.6g}"
    if isinstance(a, (list, tuple)):
        inner = ", ".join(_arg_text(x, 40) for x in a[:16])
        more = ", …" if len(a) > 16 else ""
        text = f"[{inner}{more}]"
    else:
        text = dtype_name(a) if "torch." in str(a) else repr(a)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _nodes_in(a: Any) -> Iterable[Any]:
    if hasattr(a, "op") and hasattr(a, "name"):
        yield a
    elif isinstance(a, (list, tuple)):
        for x in a:
            yield from _nodes_in(x)
    elif isinstance(a, dict):
        for x in a.values():
            yield from _nodes_in(x)


def _origin_names(meta: dict, limit: int = 12, max_visits: int = 200) -> tuple[str, ...]:
    """Names along the from_node provenance tree, nearest first. The tree repeats the same
    nodes through every pass, so walk it breadth-first with a visited set and a budget."""
    names: list[str] = []
    queue = list(meta.get("from_node") or [])
    seen: set[int] = set()
    visits = 0
    while queue and len(names) < limit and visits < max_visits:
        src = queue.pop(0)
        if id(src) in seen:
            continue
        seen.add(id(src))
        visits += 1
        name = getattr(src, "name", None)
        if name and name not in names:
            names.append(name)
        queue.extend(getattr(src, "from_node", None) or [])
    return tuple(names)


def _flags(meta: dict) -> tuple[tuple[str, str], ...]:
    custom = meta.get("custom") or {}
    out: list[tuple[str, str]] = []
    cm = custom.get("cortex_m") if isinstance(custom, dict) else None
    if isinstance(cm, dict):
        out.extend((f"cortex_m.{k}", str(v)) for k, v in cm.items())
    info = custom.get("_arm_annotation_info") if isinstance(custom, dict) else None
    if info is not None:
        out.append(("arm.quantized", str(getattr(info, "quantized", info))))
    return tuple(out)


def _debug_handle(meta: dict) -> int | None:
    dh = meta.get("debug_handle")
    if isinstance(dh, (tuple, list)):
        dh = dh[0] if dh else None
    return int(dh) if isinstance(dh, int) else None


class _Reader:
    """Reads the tensor behind a get_attr / parameter placeholder (per-channel scales).

    The graph signature's name maps are properties rebuilt on every access (ExecuTorch's
    get_param_tensor reads up to three per call, once per quantize operand); they are read once here."""

    def __init__(self, program: Any) -> None:
        self.program = program
        self._lifted: dict[str, Any] | None = None

    def _lifted_tensors(self) -> dict[str, Any]:
        """{placeholder name: tensor} for parameters, buffers and lifted constants, as get_param_tensor reads them."""
        if self._lifted is None:
            sig = self.program.graph_signature
            state, consts = self.program.state_dict, self.program.constants
            non_persistent = set(sig.non_persistent_buffers)
            lifted: dict[str, Any] = {}
            for name, target in sig.inputs_to_lifted_tensor_constants.items():
                lifted[name] = consts.get(target)
            for name, target in sig.inputs_to_buffers.items():
                lifted[name] = (consts if target in non_persistent else state).get(target)
            for name, target in sig.inputs_to_parameters.items():
                lifted[name] = state.get(target)
            self._lifted = lifted
        return self._lifted

    def __call__(self, node: Any) -> Any:
        try:
            if node.op == "get_attr":
                obj = getattr(self.program, "graph_module", self.program)
                for part in str(node.target).split("."):
                    obj = getattr(obj, part)
                return obj
            if node.op == "placeholder" and hasattr(self.program, "graph_signature"):
                return self._lifted_tensors().get(node.name)
        except Exception:  # noqa: BLE001 - a missing constant only loses a qparam detail
            return None
        return None


def capture(program: Any, stage: str, index: int, kind: str, *, final: bool = False,
            seconds: float = 0.0, log: Iterable[str] = (), changed: bool = True,
            runnable_on_host: bool = True) -> GraphSnapshot:
    """Snapshot `program` (ExportedProgram or GraphModule) as stage number `index`."""
    gm = getattr(program, "graph_module", program)
    if hasattr(program, "graph_signature"):
        user_inputs = set(program.graph_signature.user_inputs)
    else:   # a GraphModule (the PT2E stage): its placeholders are the user's inputs
        user_inputs = {n.name for n in gm.graph.nodes if n.op == "placeholder"}
    read = _Reader(program)

    quant_qp: dict[str, QParam] = {}
    for n in gm.graph.nodes:
        if n.op == "call_function":
            qp = qparam_from_quant_node(n, read)
            if qp is not None:
                quant_qp[n.name] = qp

    nodes: list[NodeSnapshot] = []
    edges: list[EdgeSnapshot] = []
    out_qp_by_name: dict[str, QParam | None] = {}
    for n in gm.graph.nodes:
        tname = target_name(n.target) if n.op == "call_function" else (
            "output" if n.op == "output" else str(n.target))
        dtype, shape = _val_dtype_shape(n.meta.get("val"))
        in_qp, out_qp = _node_qparams(n, tname, quant_qp)
        out_qp_by_name[n.name] = out_qp
        mpath, mtype = module_path_from_stack(n.meta.get("nn_module_stack"))
        schema = getattr(n.target, "_schema", None)
        nodes.append(NodeSnapshot(
            id=n.name, name=n.name, fx_op=n.op, target=tname,
            kind=classify(n.op, tname, is_user_input=n.name in user_inputs, final=final),
            dtype=dtype, shape=shape,
            inputs=tuple(dict.fromkeys(x.name for x in n.all_input_nodes)),
            args=tuple(_arg_text(a) for a in n.args) + tuple(
                f"{k}={_arg_text(v)}" for k, v in n.kwargs.items()),
            input_qparams=tuple(sorted(in_qp.items())), output_qparams=out_qp,
            requant=requant_from_cortex_m_args(n, read) if tname.startswith("cortex_m.") and not
            is_quant_boundary(tname) else None,
            debug_handle=_debug_handle(n.meta), module_path=mpath, module_type=mtype,
            source=user_source(n.meta.get("stack_trace")), origin=_origin_names(n.meta),
            flags=_flags(n.meta), schema=str(schema) if schema is not None else "",
            dim_order=_val_dim_order(n.meta.get("val")),
        ))
    by_name = {s.id: s for s in nodes}
    for n in gm.graph.nodes:
        dst = by_name[n.name]
        dst_in = dict(dst.input_qparams)
        positional = list(n.args) + list(n.kwargs.values())
        for i, a in enumerate(positional):
            for src_node in _nodes_in(a):
                src = by_name.get(src_node.name)
                if src is None:
                    continue
                qp = dst_in.get(i) or out_qp_by_name.get(src.id)
                if qp is None and op_base_name(dst.target) in _FUSABLE_ACTIVATIONS:
                    # conv→relu patterns quantize only after the activation: the edge into it
                    # shares the activation's output parameters.
                    qp = dst.output_qparams
                if qp is not None and len(qp.scales) > 8:
                    # Per-channel scales live on the node; an edge keeps the summary (mean scale,
                    # axis) so reports of big models stay small.
                    qp = replace(qp, scales=())
                edges.append(EdgeSnapshot(src=src.id, dst=dst.id, arg_index=i, dtype=src.dtype,
                                          shape=src.shape, qparams=qp))
    return GraphSnapshot(stage=stage, index=index, kind=kind, nodes=tuple(nodes),
                         edges=tuple(edges), seconds=seconds, runnable_on_host=runnable_on_host,
                         log=tuple(log), changed=changed)


def _node_qparams(n: Any, tname: str, quant_qp: dict[str, QParam]
                  ) -> tuple[dict[int, QParam], QParam | None]:
    """Input qparams by argument index and the output qparam, in one form for every stage."""
    in_qp: dict[int, QParam] = {}
    out_qp: QParam | None = None
    meta_in = n.meta.get("input_qparams")
    meta_out = n.meta.get("output_qparams")
    if isinstance(meta_in, dict):
        for i, qa in meta_in.items():
            qp = qparam_from_quant_args(qa)
            if qp is not None:
                in_qp[int(i)] = qp
    if isinstance(meta_out, dict) and meta_out:
        out_qp = qparam_from_quant_args(meta_out.get(0, next(iter(meta_out.values()))))
    if n.op != "call_function":
        return in_qp, out_qp
    if n.name in quant_qp:
        qp = quant_qp[n.name]
        if op_base_name(tname).startswith("dequantize"):
            in_qp.setdefault(0, qp)
        else:
            out_qp = out_qp or qp
        return in_qp, out_qp
    # Early stages: read the q/dq nodes around a compute node.
    for i, a in enumerate(n.args):
        if hasattr(a, "name") and a.name in quant_qp and i not in in_qp:
            if op_base_name(target_name(a.target)).startswith("dequantize"):
                in_qp[i] = quant_qp[a.name]
    if out_qp is None and n.users:
        users = list(n.users)
        if all(u.name in quant_qp and not op_base_name(target_name(u.target)).startswith(
                "dequantize") for u in users):
            out_qp = quant_qp[users[0].name]
    return in_qp, out_qp
