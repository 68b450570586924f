"""Pass-failure rules on operand dtypes and qparams, in the user's terms.

- `expected scalar type`: an op fed one int8 and one float tensor after FoldAndAnnotateQParamsPass removed
  the dequantize nodes (the float operand and where its quantized chain broke), or two integer tensors of
  different widths (eager attention's bmm in ReplaceScalarWithTensorArgPass);
- `input_qparams[i]` read but absent (timm MobileOne's `out += 0`: a KeyError in AtenToCortexMPass).
Each names every node of the same op that fails the same check, so --keep-going takes them out in one round.
`pf` is the PassFailure record being filled (pass_failure.py)."""
from __future__ import annotations

import re
from typing import Any

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.stages.fallback.failure_walks import float_origin, is_float, user_op_dict, where_text
from backend_core.stages.fallback.user_op import UserOpResolver

DTYPE_MARK = "expected scalar type"
QPARAMS_MARK = re.compile(r"input_qparams\"?\]\[(\d+)\]")     # node.meta["input_qparams"][1]: a KeyError


def _int_operand_ops(resolver: UserOpResolver, last: GraphSnapshot, n: NodeSnapshot) -> list[str]:
    """Quantisation-time names of the producers of `n`'s non-float tensor inputs."""
    out = []
    for i in n.inputs[:2]:
        x = last.node(i)
        if x is not None and x.dtype and not is_float(x.dtype):
            q = resolver.quantized_node(x)
            if q is not None:
                out.append(q.name)
    return out


def _module_of(resolver: UserOpResolver, last: GraphSnapshot, qname: str) -> str:
    q = resolver.quantized.node(qname) if resolver.quantized is not None else None
    return q.module_path if q is not None else ""


def _same_dtype_failures(resolver: UserOpResolver, last: GraphSnapshot, target: str,
                         skip: str | None) -> dict[str, list[str]]:
    """Nodes of the same op whose first two tensor inputs have different dtypes (a float and an int8, or an
    int8 and an int32): {their op at quantisation time: the producers of their non-float inputs}."""
    out: dict[str, list[str]] = {}
    for n in last.nodes:
        if n.fx_op != "call_function" or n.target != target:
            continue
        ins = [last.node(i) for i in n.inputs[:2]]
        a, b = (ins + [None, None])[:2]
        if len(ins) == 2 and a is not None and b is not None and a.dtype and b.dtype and a.dtype != b.dtype:
            q = resolver.quantized_node(n)
            if q is not None and q.name != skip:
                out[q.name] = _int_operand_ops(resolver, last, n)
    return out


def dtype_cause(pf: Any, resolver: UserOpResolver, last: GraphSnapshot, ln: NodeSnapshot | None,
                 snap_ops: list[NodeSnapshot | None]) -> None:
    """An op fed one int8 and one float tensor after FoldAndAnnotateQParamsPass removed the dequantize
    nodes: find the float operand and the producer where its quantized chain was broken."""
    dts = [(o["index"], o.get("dtype")) for o in pf.operands]
    pf.checked.append("operand dtypes: " + ", ".join(f"input {i} {d}" for i, d in dts))
    floats = [o for o in pf.operands if is_float(o.get("dtype"))]
    ints = [o for o in pf.operands if o.get("dtype") and not is_float(o.get("dtype"))]
    if not floats and len({o["dtype"] for o in ints}) > 1 and ln is not None:
        _mixed_int_cause(pf, resolver, last, ln, ints)
        return
    if not floats or not ints:
        return
    o = floats[0]
    sn = snap_ops[o["index"]] if o["index"] < len(snap_ops) else None
    text = (f"{pf.op or pf.node} gets input {ints[0]['index']} as {ints[0]['dtype']} and input {o['index']} as "
            f"{o['dtype']}; the check needs equal dtypes.")
    if ln is not None and ln.input_qparams:
        text += (f" {pf.last_good_stage if pf.last_good_stage else 'The pass before'} removed the dequantize nodes "
                 f"before it and annotated inputs {[i for i, _ in ln.input_qparams]} as quantized")
        q = resolver.quantized_node(ln)
        if q is not None and not q.output_qparams:
            text += f", although at quantisation time `{q.name}` ran in float between dequantize nodes"
        text += "."
    if sn is not None and sn.output_qparams is not None and is_float(sn.dtype):
        text += (f" Input {o['index']} comes from {sn.target} `{sn.id}`, whose output is annotated "
                 f"{sn.output_qparams.summary()} but still holds {sn.dtype} values")
        origin = float_origin(last, sn)
        if origin is not None and origin is not sn:
            pf.producer = user_op_dict(resolver, origin)
            where = where_text(pf.producer)
            text += (f": its chain starts at {origin.target} `{origin.id}` ({where}), whose output the pass left "
                     f"in {origin.dtype} with no output qparams")
        text += "."
    pf.cause = text
    if ln is not None:
        # the op itself was not quantized, and leaving only its int8 producers in float moves the same
        # mixed-dtype chain to the next op (measured on efficientvit_m0): leave the op's whole nn.Module
        # in float, as ExecuTorch's set_module_name(name, None) does (ModuleNameNodeFinder)
        same = _same_dtype_failures(resolver, last, ln.target, pf.op_node)
        pf.same_failure = list(same)
        mods = [pf.module] + [m for m in (_module_of(resolver, last, n) for n in same) if m]
        for m in dict.fromkeys(x for x in mods if x):
            pf.quarantine[f"module:{m}"] = (f"`{pf.op_node}` in it gets mixed int8/float inputs" if m == pf.module
                                            else "an op in it fails the same check")
        if pf.same_failure:
            pf.checked.append(f"{len(pf.same_failure)} more {ln.target} get mixed int8/float inputs: "
                              + ", ".join(pf.same_failure))


def _mixed_int_cause(pf: Any, resolver: UserOpResolver, last: GraphSnapshot, ln: NodeSnapshot,
                     ints: list[dict[str, Any]]) -> None:
    """An op given two integer tensors of different widths (eager attention's bmm: an int8 tensor and an
    int32 one, ReplaceScalarWithTensorArgPass re-running its meta): every node of the same op with mixed
    input dtypes fails the same check, so --keep-going takes them all out in one round."""
    a, b = ints[0], ints[1]
    pf.cause = (f"{pf.op or pf.node} gets input {a['index']} as {a['dtype']} and input {b['index']} as "
                f"{b['dtype']}; the check needs equal dtypes.")
    same = _same_dtype_failures(resolver, last, ln.target, pf.op_node)
    pf.same_failure = list(same)
    if same:
        pf.checked.append(f"{len(same)} more {ln.target} get inputs of two different dtypes: " + ", ".join(same))


def missing_qparams_cause(pf: Any, resolver: UserOpResolver, last: GraphSnapshot, ln: NodeSnapshot,
                           index: int) -> None:
    """A pass reads `node.meta["input_qparams"][i]` of an op the quantizer annotated, but input i has none
    (timm MobileOne's `out += identity_out` with identity_out a 0-d constant 0: KeyError in
    AtenToCortexMPass). Every node of the same op annotated on some inputs but not on input i fails the same
    read, so --keep-going takes them out together (it was one add per round: 3+ minutes each)."""
    o = next((x for x in pf.operands if x.get("index") == index), None)
    what = f"{o.get('shape')} {o.get('dtype')}" if o else "?"
    pf.cause = (f"{pf.op or pf.node} was quantized (input qparams for inputs {[i for i, _ in ln.input_qparams]}), but "
                f"its input {index} ({what}) has none: the quantizer left that operand unquantized (a constant or a "
                f"0-d tensor), and {pf.stage} reads input_qparams[{index}].")
    same = []
    for n in last.nodes:
        if n.fx_op != "call_function" or n.target != ln.target or n.id == ln.id or not n.input_qparams:
            continue
        if index < len(n.inputs) and index not in dict(n.input_qparams):
            q = resolver.quantized_node(n)
            if q is not None and q.name != pf.op_node:
                same.append(q.name)
    pf.same_failure = list(dict.fromkeys(same))
    if pf.same_failure:
        pf.checked.append(f"{len(pf.same_failure)} more {ln.target} have no qparams for input {index}: "
                          + ", ".join(pf.same_failure[:12]) + (", …" if len(pf.same_failure) > 12 else ""))
