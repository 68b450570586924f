"""Fold computations that read only parameters into constants, on a copy of the float export.

A weight computed in `forward` from parameters alone — a max-norm constraint or a parametrization
(braindecode's Conv2dWithConstraint, torch's weight_norm as pytorch-tcn uses it) — is the same tensor on
every inference in eval mode. torch.export keeps the arithmetic, so (1) torchao's conv-batch-norm fusion in
prepare_pt2e finds a call_function where it needs the weight as a constant (`ValueError: Expected get_attr
node, got call_function`), and (2) where it does not fail, the arithmetic runs on portable float kernels at
every inference (a weight-normed TCN: pow / sum / div over every weight). Evaluating those nodes once, with
the same aten ops on the same tensors, gives the same values; the edited program is run against the
original on the export's example inputs and kept only when the outputs are equal, bit for bit."""
from __future__ import annotations

import copy
from typing import Any

__all__ = ["FOLD_PARAMS", "fold_parameter_computations", "parameter_only_nodes"]

FOLD_PARAMS = "fold_parameter_computations"


def _param_values(ep: Any) -> dict[str, Any]:
    """{placeholder name: tensor} of the parameters, unmutated buffers and lifted constants."""
    sig = ep.graph_signature
    mutated = set(sig.buffers_to_mutate.values())
    out: dict[str, Any] = {}
    for name, fqn in sig.inputs_to_parameters.items():
        out[name] = ep.state_dict[fqn]
    for name, fqn in sig.inputs_to_buffers.items():
        if fqn not in mutated:
            out[name] = ep.state_dict[fqn] if fqn in ep.state_dict else ep.constants[fqn]
    for name, fqn in sig.inputs_to_lifted_tensor_constants.items():
        out[name] = ep.constants[fqn]
    return out


def _foldable_target(n: Any) -> bool:
    import torch

    if n.op != "call_function" or n.is_impure():
        return False
    tags = getattr(n.target, "tags", ())
    return torch.Tag.nondeterministic_seeded not in tags


def parameter_only_nodes(ep: Any) -> dict[str, Any]:
    """{node name: its value} of every call_function whose inputs are parameters, constants or other such
    nodes, and that reads at least one parameter or buffer (a bare `full` or `arange` stays: folding it
    saves nothing and can make a large constant). Values are computed here, in graph order."""
    import torch
    from torch.utils import _pytree as pytree

    values = _param_values(ep)
    known: dict[Any, Any] = {n: values[n.name] for n in ep.graph.nodes if n.op == "placeholder" and n.name in values}
    reads_param = set(known)
    out: dict[str, Any] = {}
    for n in ep.graph.nodes:
        if not _foldable_target(n):
            continue
        inputs = n.all_input_nodes
        if any(a not in known for a in inputs):
            continue
        args, kwargs = pytree.tree_map(lambda a: known[a] if isinstance(a, torch.fx.Node) else a, (n.args, n.kwargs))
        with torch.no_grad():
            try:
                val = n.target(*args, **kwargs)
            except Exception:  # noqa: BLE001 - an op that does not run on real tensors here stays in the graph
                continue
        known[n] = val
        if any(a in reads_param for a in inputs):
            reads_param.add(n)
            if isinstance(val, torch.Tensor):
                out[n.name] = val
    return out


def _frontier(ep: Any, folded: dict[str, Any]) -> list[Any]:
    """The folded nodes something outside the fold reads (the ones that become constants)."""
    nodes = [n for n in ep.graph.nodes if n.name in folded]
    return [n for n in nodes if any(u.name not in folded for u in n.users)]


def fold_parameter_computations(ep: Any) -> tuple[Any, dict[str, str]]:
    """Every parameter-only computation replaced by its value (a lifted constant), on a copy; the
    parameters nothing reads any more removed. Raises when the edited program's outputs differ from
    the original's on the export's example inputs (it never should: the same ops ran on the same tensors)."""
    import torch
    from executorch.exir.passes.constant_prop_pass import (get_fake_mode, get_first_user_input,
                                                           replace_with_constant_node)
    from torch.export.exported_program import InputKind, InputSpec, TensorArgument

    out = copy.deepcopy(ep)
    folded = parameter_only_nodes(out)
    if not folded:
        return out, {}
    fake_mode, first_input = get_fake_mode(out), get_first_user_input(out)
    # by node, not by name: a deep copy of an ExportedProgram can rename a placeholder ("input" -> "input_1")
    # and leave its spec's name as it was
    specs = dict(zip(out.graph.find_nodes(op="placeholder"), out.graph_signature.input_specs))
    for n in _frontier(out, folded):
        value = folded[n.name]
        value = value.contiguous() if 0 in value.stride() else value.clone()
        node, fqn = replace_with_constant_node(n, value, first_input, fake_mode, out)   # (names it by count)
        specs[node] = InputSpec(kind=InputKind.PARAMETER, arg=TensorArgument(name=node.name), target=fqn,
                                persistent=None)
    for spec in specs.values():
        # a parameter, as the weight it replaces was: the conv-batch-norm fusion assigns the fused weight back
        # with register_parameter, which refuses a name held by a plain tensor attribute
        if spec.kind == InputKind.PARAMETER and spec.target in out.constants:
            out.state_dict[spec.target] = torch.nn.Parameter(out.constants.pop(spec.target), requires_grad=False)
    out.graph.eliminate_dead_code()
    _drop_unused_placeholders(out, specs)
    out.graph_signature.input_specs = [specs[n] for n in out.graph.find_nodes(op="placeholder")]
    out.graph_module.recompile()
    _check_same_outputs(ep, out)
    return out, {}


def _drop_unused_placeholders(ep: Any, specs: dict[str, Any]) -> None:
    """The parameters only the folded computations read: out of the graph and the state dict."""
    from torch.export.exported_program import InputKind

    for n in list(ep.graph.find_nodes(op="placeholder")):
        spec = specs.get(n)
        if n.users or spec is None or spec.kind == InputKind.USER_INPUT:
            continue
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            ep.state_dict.pop(spec.target, None)
        ep.constants.pop(spec.target, None)
        ep.graph.erase_node(n)
        specs.pop(n)


def _check_same_outputs(before: Any, after: Any) -> None:
    import torch
    from torch.utils import _pytree as pytree

    example = getattr(before, "example_inputs", None)
    if not example:
        return
    args, kwargs = example
    with torch.no_grad():
        a = pytree.tree_leaves(before.module(check_guards=False)(*args, **kwargs))
        b = pytree.tree_leaves(after.module(check_guards=False)(*args, **kwargs))
    same = len(a) == len(b) and all(
        not isinstance(x, torch.Tensor) or (isinstance(y, torch.Tensor) and torch.equal(x, y)) for x, y in zip(a, b))
    if not same:
        raise ValueError("folding the parameter-only computations changed the program's outputs on the export's "
                         "example inputs; the fold is not applied")
