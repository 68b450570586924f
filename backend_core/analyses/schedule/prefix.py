"""Where a lowered program can be split: the program's input, the ops before a split tensor, and the
floors (the least RAM a layer-by-layer schedule and a patch schedule can reach).

A split node S is valid when every op between the input and S is a conv or pointwise op
(geometry.kind_of) and no tensor of that prefix other than S is read after it: the prefix can then
be replaced by patches whose outputs are concatenated into S."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.analyses.schedule.geometry import hw, kind_of, target_of, tensor_args, val_of


def nbytes(node: Any) -> int:
    v = val_of(node)
    if v is None or not hasattr(v, "shape"):
        return 0
    n = 1
    for s in v.shape:
        n *= int(s)
    return n * v.element_size()


def user_input(ep: Any) -> Any:
    """The program's one tensor input (a schedule patches one image)."""
    names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    if len(names) != 1:
        raise BadInputError(f"The program has {len(names)} inputs; a patch schedule needs exactly one image input.",
                            "Schedule a model with one [N, C, H, W] input.")
    node = next(n for n in ep.graph.nodes if n.op == "placeholder" and n.name == names[0])
    v = val_of(node)
    if v is None or len(v.shape) != 4:
        raise BadInputError(f"The program's input {node.name} is not a 4-D image tensor "
                            f"({tuple(v.shape) if v is not None else '?'}).",
                            "Patch schedules split [N, C, H, W] inputs: pick a convolutional model.")
    node.meta["schedule_user_input"] = True       # geometry.tensor_args: an activation, not a constant
    return node


@dataclass
class Prefix:
    split: Any                         # the node whose output the patches assemble
    nodes: list[Any]                   # the prefix ops in graph order (split last)

    @property
    def name(self) -> str:
        return self.split.name


def _ops(ep: Any) -> list[Any]:
    return [n for n in ep.graph.nodes if n.op == "call_function" and kind_of(n) != "plumbing"]


def split_candidates(ep: Any, start: Any | None = None) -> tuple[list[Prefix], str]:
    """Every valid split node in graph order, and why the patchable region ends (the first op that is
    not a conv or a pointwise op, named). `start`: the tensor a later stage of a multi-stage schedule
    patches from (the previous stage's split tensor, assembled whole); default the program's input."""
    x = user_input(ep) if start is None else start
    region: set[Any] = {x}
    why = ""
    out: list[Prefix] = []
    for node in _ops(ep):
        ins = tensor_args(node)
        if not ins or not all(a in region for a in ins):
            if any(a in region for a in node.all_input_nodes) and not why:
                why = (f"{node.name} ({target_of(node)}) reads the patched region and is not a convolution or a "
                       "pointwise op: a patch schedule cannot run it per patch")
            continue
        if kind_of(node) not in ("conv", "pointwise"):
            if not why:
                why = f"{node.name} ({target_of(node)}) cannot run per patch"
            continue
        region.add(node)
        prefix = _ancestors(node, region - {x})
        if _closed(prefix, node) and min(hw(node)) >= 2:
            out.append(Prefix(node, [n for n in _ops(ep) if n in prefix]))
    return out, why or "the whole graph after the input is patchable"


def _ancestors(node: Any, region: set[Any]) -> set[Any]:
    seen: set[Any] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n in seen or n not in region or n.op == "placeholder":
            continue
        seen.add(n)
        todo.extend(tensor_args(n))
    return seen


def _closed(prefix: set[Any], split: Any) -> bool:
    """No prefix tensor but the split one is read outside the prefix."""
    for n in prefix:
        if n is split:
            continue
        if any(u not in prefix for u in n.users):
            return False
    return True


def live_sums(ep: Any) -> list[tuple[Any, int]]:
    """Bytes that must be alive at each op when ops run one after another in graph order: every tensor
    made before and still read at or after the op, the op's output and its scratch (perfect packing)."""
    order = [n for n in ep.graph.nodes if n.op in ("placeholder", "call_function")]
    index = {n: i for i, n in enumerate(order)}
    x = user_input(ep)
    last: dict[Any, int] = {}
    for n in order:
        if n.op == "placeholder" and n is not x:
            continue                   # constants live in flash
        users = [index[u] for u in n.users if u in index]
        out_node = any(u.op == "output" for u in n.users)
        last[n] = len(order) if out_node else max(users, default=index[n])
    out = []
    for i, n in enumerate(order):
        if n.op != "call_function" or kind_of(n) == "plumbing":
            continue
        live = sum(nbytes(t) for t, end in last.items() if index[t] <= i <= end and kind_of(t) != "plumbing")
        scratch = sum(nbytes(a) for a in n.args if hasattr(a, "op") and a.op == "call_function"
                      and kind_of(a) == "plumbing")
        out.append((n, live + scratch))
    return out


def layer_floor(ep: Any) -> tuple[int, str]:
    """The least RAM any layer-by-layer schedule in this op order needs: the largest live sum at one op."""
    sums = live_sums(ep)
    node, most = max(sums, key=lambda r: r[1])
    return most, node.name


def patch_floor(ep: Any, prefix: Prefix, input_bytes: int) -> int:
    """What a patch schedule at this split cannot go below: the input buffer with the split tensor
    assembled beside it, and the largest live sum at or after the split (those ops run whole)."""
    sums = live_sums(ep)
    names = [n for n, _ in sums]
    start = names.index(prefix.split) + 1 if prefix.split in names else 0
    suffix = max((b for _, b in sums[start:]), default=0)
    return max(input_bytes + nbytes(prefix.split), suffix)
