"""Pass-failure rule: `quantized_activation input must be int8` (cortex_m/ops/operators.py).

AtenToCortexMPass turns every sigmoid, tanh, ... that carries input and output qparams into a 256-entry
int8 lookup table (`_get_activation_replacement`, after `_has_qparams`). FoldAndAnnotateQParamsPass
annotates the op from the quantize/dequantize nodes around it, so an op whose input tensor the
quantizer left in float (torch.ao's quantizable LSTM: the gates' chunk of a float add) is annotated
int8 yet still reads float, and the fake kernel's dtype check fails. The rule re-evaluates that
predicate on every such op of the last good stage, so --keep-going takes them all out in one round."""
from __future__ import annotations

from typing import Any

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.stages.fallback.failure_walks import float_origin, is_float, user_op_dict, where_text
from backend_core.stages.fallback.user_op import UserOpResolver

ACTIVATION_MARK = "quantized_activation input must be int8"


def lut_activation_targets() -> frozenset[str]:
    """Edge ops AtenToCortexMPass makes a LUT activation, from its own registry of substitutions."""
    from executorch.backends.cortex_m.passes.aten_to_cortex_m_pass import AtenToCortexMPass

    from backend_core.common.snapshot.capture import target_name

    return frozenset(target_name(t) for t, fn in AtenToCortexMPass._DIALECT_SUBSTITUTIONS.items()
                     if getattr(fn, "__name__", "") == "_get_activation_replacement")


def _fails_int8_check(last: GraphSnapshot, n: NodeSnapshot, targets: frozenset[str]) -> bool:
    """ExecuTorch's predicate: the op gets substituted (input and output qparams) and its input is not int8."""
    if n.fx_op != "call_function" or n.target not in targets or not n.input_qparams or n.output_qparams is None:
        return False
    src = last.node(n.inputs[0]) if n.inputs else None
    return src is not None and is_float(src.dtype)


def activation_cause(pf: Any, resolver: UserOpResolver, last: GraphSnapshot, ln: NodeSnapshot | None,
                     snap_ops: list[NodeSnapshot | None]) -> None:
    """Fill pf.cause / checked / producer / same_failure for a LUT activation fed a float tensor."""
    targets = lut_activation_targets()
    pf.checked.append("ops AtenToCortexMPass makes a LUT activation: " + ", ".join(sorted(targets)))
    if ln is None or not snap_ops or snap_ops[0] is None:
        return
    sn = snap_ops[0]
    pf.checked.append(f"input 0 of `{ln.id}` comes from {sn.target} `{sn.id}` and holds {sn.dtype}")
    if not is_float(sn.dtype):
        return
    in_qp = dict(ln.input_qparams)
    qp = in_qp.get(0)
    text = (f"{pf.op or ln.target} is annotated as quantized (input 0 {qp.summary() if qp else 'with qparams'}), so "
            f"AtenToCortexMPass replaces it with an int8 lookup table, but its input still holds {sn.dtype}: "
            f"the quantizer left the tensor in float, and FoldAndAnnotateQParamsPass annotated the "
            f"op from the quantize/dequantize nodes around it.")
    origin = float_origin(last, sn)
    if origin is not None:
        pf.producer = user_op_dict(resolver, origin)
        where = where_text(pf.producer)
        text += f" The float chain starts at {origin.target} `{origin.id}`" + (f" ({where})" if where else "") + "."
    pf.cause = text
    # Other LUT activations that read the same float tensor (a piece of the same chunk/split) fail the
    # same way and are taken out in the same round. Ones fed otherwise are only named: taking the first
    # ones out changes what the quantizer annotates downstream (measured on torch.ao's quantizable LSTM:
    # its later cell ops then lower as int8), so they wait for a round of their own if they still fail.
    tensor = _tensor_read(last, sn)
    same: list[Any] = []
    later: list[Any] = []
    for n in last.nodes:
        if n.id == ln.id or not _fails_int8_check(last, n, targets):
            continue
        q = resolver.quantized_node(n)
        if q is None or q.name == pf.op_node:
            continue
        src = last.node(n.inputs[0])
        (same if src is not None and _tensor_read(last, src) == tensor else later).append(q.name)
    pf.same_failure = same
    if same:
        pf.checked.append(f"{len(same)} more LUT activations read the same float tensor: " + ", ".join(same))
    if later:
        pf.checked.append(f"{len(later)} LUT activations read other float tensors now: " + ", ".join(later))


def _tensor_read(last: GraphSnapshot, src: NodeSnapshot) -> str:
    """The node whose output an input reads: a getitem's source (one piece of a split), else the node."""
    if src.target == "getitem" and src.inputs and last.node(src.inputs[0]) is not None:
        return src.inputs[0]
    return src.id
