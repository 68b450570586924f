"""A failing quantizer stage (torchao's prepare_pt2e / convert_pt2e), in the user's terms, as a pass failure
gets it (backend_core.stages.fallback.pass_failure): the node torchao was working on, the line of the model that
made it, its module, the check that raised, the cause where the graph establishes it, and a workaround the
tool can make itself.

The rule here: torchao fuses an eval-mode batch norm into the conv before it and needs the conv's weight as
a constant (`_get_tensor_constant_from_node`: "Expected get_attr node, got call_function"). A conv whose
weight is computed in forward from parameters alone (braindecode's max-norm constraint, a parametrization,
weight norm) has a call_function there. In eval mode that weight is the same tensor on every inference, so
folding the computation into a constant (backend_core.stages.fallback.parameter_folding) changes no value."""
from __future__ import annotations

from typing import Any

from backend_core.common.snapshot.model import KIND_INPUT, KIND_WEIGHT, GraphSnapshot, NodeSnapshot
from backend_core.stages.fallback.parameter_folding import FOLD_PARAMS
from backend_core.stages.fallback.pass_failure import PassFailure

WEIGHT_MARK = "Expected get_attr node, got call_function"
FOLD_FIX = ("compute the weight once before export (torch.nn.utils.parametrize.remove_parametrizations(module, "
            "'weight', leave_parametrized=True) keeps the constrained value; for the old weight_norm, "
            "torch.nn.utils.remove_weight_norm). --keep-going folds every parameter-only computation into a "
            "constant on a copy of the export (the same ops on the same tensors, checked equal on the example "
            "inputs) and lowers again, which verifies it.")
_CONV = ("conv1d", "conv2d", "conv3d", "conv_transpose", "convolution", "linear")
_NORM = ("batch_norm",)


def _users(snap: GraphSnapshot, node_id: str) -> list[NodeSnapshot]:
    return [n for n in snap.nodes if node_id in n.inputs]


def reads_only_parameters(snap: GraphSnapshot, start: NodeSnapshot) -> bool:
    """Nothing above `start` is a user input, and at least one parameter or buffer is (a placeholder of the
    float export, a get_attr after quantisation): its value is the same on every inference."""
    todo, seen, weights = [start], set(), 0
    while todo:
        n = todo.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if n.kind == KIND_INPUT:
            return False
        weights += n.kind == KIND_WEIGHT
        todo.extend(x for i in n.inputs if (x := snap.node(i)) is not None)
    return weights > 0


def _set_user_op(pf: PassFailure, n: NodeSnapshot) -> None:
    pf.op, pf.op_node = n.target, n.id
    src = n.source
    pf.source = src.full if src else None
    pf.code, pf.function = (src.code, src.function) if src else ("", "")
    pf.chain = list(src.chain) if src else []
    pf.module, pf.module_type = n.module_path, n.module_type


def diagnose_quantizer(failure: Any, snapshots: list[GraphSnapshot]) -> PassFailure:
    """`failure`: backend_core.stages.pipeline.failure.LiveFailure of the quantized stage; `snapshots`: the stages
    before it (the float export: its node ids are the names prepare_pt2e sees)."""
    pf = PassFailure(stage=failure.stage, error=failure.error, error_type=failure.error_type,
                     check=failure.check_code, check_at=failure.check_file, node=failure.node)
    export = snapshots[-1] if snapshots else None
    n = export.node(failure.node) if export is not None and failure.node else None
    if n is None:
        pf.checked.append("torchao's failing frame holds no node of the float export" if export is not None
                          else "no earlier stage to trace the node in")
        return pf
    assert export is not None                   # n is one of its nodes
    pf.last_good_stage, pf.last_good_node = export.stage, n.id
    _set_user_op(pf, n)
    if WEIGHT_MARK in failure.error and n.fx_op == "call_function":
        _computed_weight_cause(pf, export, n)
    else:
        pf.checked.append("no rule of the tool matches this torchao check; the node above is what it was reading")
    return pf


def _computed_weight_cause(pf: PassFailure, export: GraphSnapshot, n: NodeSnapshot) -> None:
    convs = [u for u in _users(export, n.id) if any(c in u.target for c in _CONV)]
    conv = convs[0] if convs else None
    norm = next((u for u in _users(export, conv.id) if any(b in u.target for b in _NORM)), None) if conv else None
    only_params = reads_only_parameters(export, n)
    pf.checked.append(f"`{n.id}` ({n.target}) reads only parameters and buffers: {only_params}")
    if conv is None:
        pf.checked.append(f"no conv or linear reads `{n.id}` directly")
        return
    at = f" at {n.source.short} (`{n.source.code}`)" if n.source else ""
    pf.producer = {"node": conv.id, "op": conv.target, "op_at_quantisation": conv.target,
                   "name_at_quantisation": conv.id, "source": conv.source.full if conv.source else None,
                   "code": conv.source.code if conv.source else "", "module": conv.module_path,
                   "dim_order": None}
    if norm is not None:
        pf.repro_node = norm.id
    fused = f"the batch norm `{norm.id}` after it" if norm is not None else "a batch norm"
    pf.cause = (f"the {conv.target} `{conv.id}` (module {conv.module_path or 'model'}) reads its weight from "
                f"{n.target} `{n.id}`{at}: the weight is computed in forward (a max-norm constraint, a "
                f"parametrization or weight norm), not stored. torchao's prepare_pt2e fuses {fused} into the conv "
                f"by reading the conv's weight as a constant (a get_attr node) and finds this computation "
                "instead." + (" In eval mode it depends only on parameters, so it is the same tensor on every "
                              "inference." if only_params else ""))
    if only_params:
        pf.workaround = FOLD_PARAMS
        pf.workaround_text = FOLD_FIX
