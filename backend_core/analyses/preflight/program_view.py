"""What the runtime sees: the serialised program's kernel calls with their tensors' dtype, sizes and
dim order, read from the .pte/.bpte flatbuffer (schema/program.fbs) exactly as the runtime's tensor
parser reads them (runtime/executor/tensor_parser_portable.cpp builds each TensorImpl from these
sizes and this dim order, its strides by dim_order_to_stride).

The kernel rules evaluate here, not on the graph before serialisation: `to_executorch()` runs passes
of its own (LegalizePortableDimOrderPass puts a contiguous `_to_dim_order_copy` before portable
mean/sum/avg_pool/expand; view_copy becomes a planned view), so the final graph is not the program.

Each call is matched to the final snapshot's node that emitted it (same operator, same output sizes
and dtype, its inputs produced by the nodes its graph inputs name); a call with no such node was
inserted by `to_executorch` and is attributed to the node it was inserted for (the first matched
call that reads its output). No torch import."""
from __future__ import annotations

import re

import struct
from dataclasses import dataclass, field
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.target.build.ops import _Table, program_bytes
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.analyses.preflight.dim_order import strides

# schema/scalar_type.fbs
SCALAR_TYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
                7: "float64", 11: "bool", 15: "bfloat16", 27: "uint16", 28: "uint32", 29: "uint64"}
# KernelTypes union of schema/program.fbs
_NULL, _INT, _BOOL, _DOUBLE, _TENSOR, _STRING, _INT_LIST, _DOUBLE_LIST, _BOOL_LIST, _TENSOR_LIST, _OPT_LIST = \
    range(1, 12)
_KERNEL_CALL = 1                      # InstructionArguments union

# Operators to_executorch inserts (no node of the final graph emits them): their out-variant arguments.
INSERTED_SCHEMAS = {
    "dim_order_ops::_to_dim_order_copy": ("dim_order_ops._to_dim_order_copy.default",
                                          ("self", "non_blocking", "dim_order")),
    "dim_order_ops::_clone_dim_order": ("dim_order_ops._clone_dim_order.default",
                                        ("self", "non_blocking", "dim_order")),
}


@dataclass(frozen=True)
class Tensor:
    """One tensor value as the runtime builds it."""

    index: int                         # EValue index in the execution plan
    dtype: str
    sizes: tuple[int, ...]
    dim_order: tuple[int, ...]
    constant: bool = False

    @property
    def strides(self) -> tuple[int, ...]:
        return strides(self.sizes, self.dim_order)


@dataclass
class Call:
    """One KernelCall instruction."""

    position: int                      # instruction index in the chain
    op: str                            # "aten::mean"
    overload: str                      # "out"
    args: list[int]                    # EValue indices of the out-variant schema's arguments (outs last)
    outs: list[int] = field(default_factory=list)   # the out arguments
    node: str = ""                     # the final-graph node that emitted it ("" when inserted)
    for_node: str = ""                 # inserted: the node it was inserted for
    target: str = ""                   # the functional target the kernel checks are keyed by
    names: tuple[str, ...] = ()        # names of args[:len(names)] (the functional schema's)

    @property
    def name(self) -> str:
        return f"{self.op}.{self.overload}" if self.overload else self.op

    @property
    def inserted(self) -> bool:
        return not self.node

    @property
    def where(self) -> str:
        """The node a finding on this call is shown on."""
        return self.node or self.for_node


@dataclass
class ProgramView:
    values: list[Any]                  # per EValue: Tensor, int, float, bool, str, list, None
    kinds: list[int]                   # per EValue: its KernelTypes tag
    calls: list[Call]
    inputs: list[int]
    outputs: list[int]
    producer: dict[int, str] = field(default_factory=dict)   # value index -> node id that wrote it
    labels: dict[int, str] = field(default_factory=dict)     # value index -> how evidence names it

    def label(self, index: int) -> str:
        return self.labels.get(index) or self.producer.get(index) or f"value {index}"

    def tensor(self, index: int) -> Tensor | None:
        v = self.values[index] if 0 <= index < len(self.values) else None
        return v if isinstance(v, Tensor) else None

    def tensors_of(self, index: int) -> list[Tensor]:
        """The tensors of an argument: itself, or the items of a tensor list."""
        t = self.tensor(index)
        if t is not None:
            return [t]
        if self.kinds[index] in (_TENSOR_LIST, _OPT_LIST):
            return [x for i in self.values[index] if i >= 0 for x in [self.tensor(i)] if x is not None]
        return []

    def value(self, index: int) -> Any:
        return self.values[index]

    def ints(self, index: int) -> list[int] | None:
        """An int[] argument's values: the program stores an IntList as the indices of boxed Int EValues."""
        if not 0 <= index < len(self.values) or self.kinds[index] != _INT_LIST:
            return None
        return [int(self.values[i]) for i in self.values[index]]


def _vec(t: _Table, index: int, fmt: str) -> list[Any]:
    at = t._indirect(index)
    if at is None:
        return []
    n = struct.unpack_from("<I", t.buf, at)[0]
    return list(struct.unpack_from(f"<{n}{fmt[-1]}", t.buf, at + 4))


def _scalar(t: _Table, index: int, fmt: str, default: Any = 0) -> Any:
    at = t._field(index)
    return default if at is None else struct.unpack_from(fmt, t.buf, at)[0]


def _evalue(ev: _Table) -> tuple[int, Any]:
    kind = _scalar(ev, 0, "<B")
    at = ev._indirect(1)
    if at is None:
        return kind, None
    t = _Table(ev.buf, at)
    if kind == _INT:
        return kind, _scalar(t, 0, "<q")
    if kind == _BOOL:
        return kind, bool(_scalar(t, 0, "<B"))
    if kind == _DOUBLE:
        return kind, _scalar(t, 0, "<d", 0.0)
    if kind == _STRING:
        return kind, t.string(0)
    if kind in (_INT_LIST,):
        return kind, _vec(t, 0, "<q")
    if kind in (_TENSOR_LIST, _OPT_LIST):
        return kind, _vec(t, 0, "<i")
    if kind == _BOOL_LIST:
        return kind, [bool(b) for b in t.bytes_(0)]
    if kind == _DOUBLE_LIST:
        return kind, _vec(t, 0, "<d")
    return kind, None


def _sub_table(t: _Table, index: int) -> _Table:
    """A required table field of `t` (the schema's union values and kernel calls are never absent)."""
    at = t._indirect(index)
    assert at is not None, f"field {index} of a table is missing"
    return _Table(t.buf, at)


def _tensor(ev: _Table, index: int) -> Tensor:
    t = _sub_table(ev, 1)
    code = _scalar(t, 0, "<b")
    alloc = t._field(6)
    return Tensor(index, SCALAR_TYPES.get(code, f"scalar_type {code}"), tuple(_vec(t, 2, "<i")),
                  tuple(t.bytes_(3)), constant=alloc is None and _scalar(t, 5, "<I") > 0)


def _split(args: list[int], kinds: list[int], values: list[Any]) -> tuple[int, list[int]]:
    """(number of schema arguments, out arguments). The emitter appends the returned value(s) after the
    schema's arguments, and an out variant returns its out arguments: the tail repeats them
    (`..., out, out`; `..., out, idx, out, idx`) or lists them (`..., out, idx, [out, idx]`)."""
    for t in range(len(args) // 2, 0, -1):
        if args[-t:] == args[-2 * t:-t]:
            return len(args) - t, args[-t:]
    if args and kinds[args[-1]] == _TENSOR_LIST:
        items = list(values[args[-1]])
        k = len(items)
        if k and args[-1 - k:-1] == items:
            return len(args) - 1, items
    return max(len(args) - 1, 0), args[-1:]


def read_program(data: bytes, method: str = "forward") -> ProgramView:
    """The execution plan `method` of a .pte (or the program inside a .bpte)."""
    try:
        return _read(program_bytes(data), method)
    except (struct.error, IndexError, TypeError) as exc:
        raise BadInputError(f"The ExecuTorch program is corrupt: {exc}.",
                            "Lower the model again (`cmlens lower --pte/--bpte`).") from exc


def _read(prog: bytes, method: str) -> ProgramView:
    root = _Table(prog, struct.unpack_from("<I", prog, 0)[0])
    plans = root.tables(1)
    plan = next((p for p in plans if p.string(0) == method), plans[0])
    values: list[Any] = []
    kinds: list[int] = []
    for i, ev in enumerate(plan.tables(2)):
        kind = _scalar(ev, 0, "<B")
        kinds.append(kind)
        values.append(_tensor(ev, i) if kind == _TENSOR else _evalue(ev)[1])
    ops = [(o.string(0) or "", o.string(1) or "") for o in plan.tables(6)]
    calls = []
    pos = 0
    for chain in plan.tables(5):
        for ins in chain.tables(2):
            if _scalar(ins, 0, "<B") == _KERNEL_CALL:
                kc = _sub_table(ins, 1)
                name, overload = ops[_scalar(kc, 0, "<i")]
                args = _vec(kc, 1, "<i")
                n_args, outs = _split(args, kinds, values)
                calls.append(Call(pos, name, overload, args[:n_args], outs))
            pos += 1
    return ProgramView(values, kinds, calls, _vec(plan, 3, "<i"), _vec(plan, 4, "<i"))


# -- matching calls to the final graph's nodes ---------------------------------------------

def _base(target: str) -> str:
    """`aten.mean.dim` -> `aten::mean`."""
    parts = target.split(".")
    return f"{parts[0]}::{parts[1]}" if len(parts) >= 2 else target


def _schema_names(schema: str) -> tuple[str, ...]:
    return tuple(schema_arg_names(schema))


def schema_arg_names(schema: str) -> list[str]:
    """`aten::cat(Tensor[] tensors, int dim=0) -> Tensor` -> ["tensors", "dim"] (keyword-only too)."""
    m = re.match(r"^[^(]*\((.*)\)\s*->", schema)
    if not m:
        return []
    names, depth, cur = [], 0, ""
    for ch in m.group(1) + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            part = cur.strip()
            cur = ""
            if not part or part == "*":
                continue
            decl = part.split("=", 1)[0].strip()
            names.append(decl.split()[-1])
        else:
            cur += ch
    return names


def _fits(view: ProgramView, call: Call, node: NodeSnapshot, inputs_of: dict[str, set[str]]) -> bool:
    if _base(node.target) != call.op:
        return False
    out = view.tensor(call.outs[0]) if call.outs else None
    if out is not None and node.shape is not None and (tuple(out.sizes) != tuple(node.shape)
                                                       or (node.dtype and node.dtype != out.dtype)):
        return False
    known = {view.producer[a] for a in _in_args(view, call) if a in view.producer}
    return known <= inputs_of.get(node.id, set())


def _in_args(view: ProgramView, call: Call) -> list[int]:
    """The tensors the call reads (tensor-list items included; outs excluded)."""
    outs = set(call.outs)
    return [t.index for a in call.args if a not in outs for t in view.tensors_of(a)]


def match_nodes(view: ProgramView, final: GraphSnapshot | None) -> ProgramView:
    """Fill each call's `node` / `for_node`, `target` and argument `names` from the final snapshot."""
    if final is None:
        for c in view.calls:
            c.target, c.names = INSERTED_SCHEMAS.get(c.op, ("", ()))
        return view
    getitem = {n.id: set(n.inputs) for n in final.nodes if n.target == "getitem"}
    inputs_of: dict[str, set[str]] = {}
    for e in final.edges:                      # a getitem selects an output: its producer wrote it
        inputs_of.setdefault(e.dst, set()).update({e.src} | getitem.get(e.src, set()))
    user_inputs = [n for n in final.nodes if n.fx_op == "placeholder" and n.kind == "input"]
    for idx, node in zip(view.inputs, user_inputs):
        view.producer[idx] = node.id
    pending = [n for n in final.nodes if n.fx_op == "call_function"]
    for call in view.calls:
        hit = next((n for n in pending if _fits(view, call, n, inputs_of)), None)
        if hit is not None:
            pending.remove(hit)
            call.node, call.target, call.names = hit.id, hit.target, _schema_names(hit.schema)
            for o in call.outs:
                for t in view.tensors_of(o):
                    view.producer[t.index] = hit.id
        else:
            call.target, call.names = INSERTED_SCHEMAS.get(call.op, ("", ()))
            src = next((view.producer[a] for a in _in_args(view, call) if a in view.producer), None)
            for o in call.outs:             # transparent: the copy stands for the tensor it copies
                if src is not None:
                    view.producer[o] = src
                view.labels[o] = f"value {o} ({call.name} of %{src or '?'}, inserted by to_executorch)"
    for i in range(len(view.calls) - 1, -1, -1):      # backwards: a copy feeding a copy takes its node
        call = view.calls[i]
        if call.inserted:
            outs = set(call.outs)
            user = next((c for c in view.calls[i + 1:] if outs & set(_in_args(view, c))), None)
            call.for_node = user.where if user is not None else ""
    return view


def stored_dim_orders(data: bytes, final: GraphSnapshot) -> dict[str, tuple[int, ...]]:
    """{final-graph node: the dim order the serialised program gives its (first) output}: what the runtime
    builds, which can differ from the node's meta (to_executorch propagates the tensors again)."""
    return output_dim_orders(match_nodes(read_program(data), final))


def output_dim_orders(view: ProgramView) -> dict[str, tuple[int, ...]]:
    """stored_dim_orders on a program already read and matched."""
    out: dict[str, tuple[int, ...]] = {}
    for call in view.calls:
        if call.inserted:
            continue
        for o in call.outs[:1]:
            t = view.tensor(o)
            if t is not None and call.node not in out:
                out[call.node] = tuple(t.dim_order)
    return out
