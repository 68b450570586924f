"""A .pte program (read by ExecuTorch's own deserialiser) as one GraphSnapshot, stage `program`:
one node per instruction in execution order, named arguments from the kernels' schemas, values
with dtype / shape / dim order / memory placement, constants with their sizes, qparams from the
quantize/dequantize kernels' arguments and requantisation from the cortex_m kernels' arguments.

Node ids follow the kernel names (`cortex_m_quantized_conv2d_out`, `..._1`, ...): a program has
no FX names. Tensors nobody produced before they are used, that are neither inputs nor constants,
are the memory-planned scratch buffers (the `memory.alloc` nodes of the lowered graph)."""
from __future__ import annotations

import traceback
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.common.snapshot.classify import classify, is_quant_boundary, op_base_name
from backend_core.common.snapshot.model import (KIND_DATA, KIND_DELEGATE, KIND_INPUT, KIND_PLUMBING, KIND_WEIGHT, EdgeSnapshot,
                              GraphSnapshot, NodeSnapshot, QParam)
from backend_core.common.snapshot.qparams import requant_from_cortex_m_args
from backend_core.lowering.artefacts import values as V
from backend_core.lowering.artefacts.schemas import KernelSchema, kernel_schema

STAGE_PROGRAM = "program"


def deserialize(data: bytes, name: str, *, fast: bool = True) -> Any:
    """ExecuTorch's PTEFile for `data`; a flatbuffer it cannot parse is bad input, not a crash.

    `fast`: when every kernel's schema is in the version-keyed table (schemas.py), read the program
    without importing torch (memory/pte_reader.py); else with `deserialize_pte_binary`."""
    from backend_core.target.memory.pte_reader import read_pte_file

    try:
        return read_pte_file(data, _schemas_known, torch_free=fast)
    except Exception as e:  # anything the deserialiser raises means a bad file
        raise BadInputError(
            f"ExecuTorch could not read {name}: {type(e).__name__}: {str(e)[:200]}",
            "The file is damaged or was written by a different ExecuTorch version: export it again "
            "with the installed ExecuTorch.", detail=traceback.format_exc()) from e


def _schemas_known(pte: Any) -> bool:
    """The schema table knows every kernel the program calls, so the torch-free read gives the snapshot
    the full reader gives."""
    from backend_core.lowering.artefacts.schemas import known_without_torch

    return known_without_torch([(o.name, o.overload) for plan in pte.program.execution_plan for o in plan.operators])


class _Builder:
    """Walks one execution plan and collects nodes/edges."""

    def __init__(self, program: Any, plan: Any) -> None:
        self.program, self.plan = program, plan
        self.values = list(plan.values)
        self.producer: dict[int, str] = {}          # value index -> node id that wrote it
        self.nodes: list[NodeSnapshot] = []
        self.edges: list[EdgeSnapshot] = []
        self.counts: dict[str, int] = {}
        self.value_qp: dict[int, QParam] = {}       # value index -> qparams (q outputs, dq inputs)
        self.unknown_kernels: list[str] = []
        self.instruction_nodes: list[str] = []      # node id per instruction index
        self.planned: list[dict[str, Any]] = []
        self.written_at: dict[tuple[int, int], int] = {}   # (mem id, offset) -> last value written there

    def unique(self, base: str) -> str:
        n = self.counts.get(base, 0)
        self.counts[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def tensor(self, index: int) -> Any:
        v = self.values[index].val
        return v if type(v).__name__ == "Tensor" else None

    def value_node(self, index: int, node_id: str, fx_op: str, target: str, kind: str) -> str:
        t = self.tensor(index)
        flags = self.tensor_flags(index, node_id)
        self.nodes.append(NodeSnapshot(id=node_id, name=node_id, fx_op=fx_op, target=target, kind=kind,
                                       dtype=V.dtype_of(t) if t else None,
                                       shape=tuple(int(s) for s in t.sizes) if t else None, flags=flags,
                                       args=(f"value {index}",),
                                       dim_order=tuple(int(d) for d in t.dim_order) if t else None))
        self.producer[index] = node_id
        place = V.planned(t) if t is not None else None
        if place is not None and kind == KIND_INPUT:
            self.written_at[place] = index
        return node_id

    def tensor_flags(self, index: int, node_id: str) -> tuple[tuple[str, str], ...]:
        t = self.tensor(index)
        if t is None:
            return ()
        out = [("dim_order", ",".join(str(int(d)) for d in t.dim_order)), ("bytes", str(V.nbytes(t)))]
        place = V.planned(t)
        if place is not None:
            out.append(("memory", f"mem_id={place[0]} offset={place[1]}"))
            self.planned.append({"node": node_id, "value": index, "mem_id": place[0], "offset": place[1],
                                 "bytes": V.nbytes(t)})
        elif V.is_constant(t):
            out.append(("constant_buffer", str(int(t.data_buffer_idx))))
        return tuple(out)

    def ensure_source(self, index: int) -> None:
        """A tensor used before anyone wrote it: a constant, or a planned scratch buffer."""
        if index in self.producer or self.tensor(index) is None:
            return
        t = self.tensor(index)
        if V.is_constant(t):
            self.value_node(index, self.unique(f"constant_{index}"), "placeholder", f"constant_{index}",
                            KIND_WEIGHT)
            return
        place = V.planned(t)
        alias = self.written_at.get(place) if place is not None else None
        if alias is not None and V.nbytes(self.tensor(alias)) == V.nbytes(t):
            # to_executorch() turns a view_copy into a memory-planned view: a tensor at the same
            # place as the last one written there, with the same size, is that tensor reshaped.
            src = self.producer[alias]
            node_id = self.value_node(index, self.unique("view"), "call_function", "memory.view", KIND_DATA)
            self.nodes[-1] = replace(self.nodes[-1], inputs=(src,), args=(
                f"view of %{src} (same memory, no instruction)",) + self.nodes[-1].args)
            at = self.tensor(alias)
            self.edges.append(EdgeSnapshot(src=src, dst=node_id, arg_index=0, dtype=V.dtype_of(at),
                                           shape=tuple(int(s) for s in at.sizes), qparams=self.value_qp.get(alias)))
            if alias in self.value_qp:
                self.value_qp[index] = self.value_qp[alias]
            return
        self.value_node(index, self.unique("alloc"), "call_function", "memory.alloc", KIND_PLUMBING)

    def tensor_args(self, index: int) -> list[int]:
        v = self.values[index].val
        k = type(v).__name__
        if k == "Tensor":
            return [index]
        if k in ("TensorList", "OptionalTensorList"):
            return [int(i) for i in v.items if int(i) >= 0]
        return []

    # -- instructions ------------------------------------------------------------------
    def kernel(self, pos: int, call: Any) -> None:
        op = self.plan.operators[call.op_index]
        schema = kernel_schema(op.name, op.overload)
        ns, _, op_name = op.name.partition("::")
        target = f"{ns}.{op_name}.{op.overload or 'default'}"
        if schema is None and f"{op.name}.{op.overload}" not in self.unknown_kernels:
            self.unknown_kernels.append(f"{op.name}.{op.overload}")
        args = [int(a) for a in call.args]
        specs = schema.args if schema else ()
        outs = [a for i, a in enumerate(args) if (i < len(specs) and specs[i].is_out) or
                (schema is None and i == len(args) - 1)]
        ins = [(i, a) for i, a in enumerate(args[: len(specs)] if schema else args[:-1])
               if a not in outs]
        node_id = self.unique(target.replace(".", "_"))
        self.add_call(pos, node_id, target, ins, outs, args, schema)

    def delegate(self, pos: int, call: Any) -> None:
        d = self.plan.delegates[call.delegate_index]
        args = [int(a) for a in call.args]
        # A delegate's arguments are its inputs then its outputs; the outputs are the tensors
        # nobody wrote before this call.
        first_new = next((i for i, a in enumerate(args) if self.tensor(a) is not None and a not in
                          self.producer and not V.is_constant(self.tensor(a))), len(args))
        ins = list(enumerate(args[:first_new]))
        outs = [a for a in args[first_new:] if self.tensor(a) is not None]
        node_id = self.unique(f"delegate_{d.id}")
        self.add_call(pos, node_id, f"delegate.{d.id}", ins, outs, args, None, kind=KIND_DELEGATE,
                      extra_args=(f"backend={d.id}", f"processed={_processed_size(self.program, d):,} B"))

    def add_call(self, pos: int, node_id: str, target: str, ins: list[tuple[int, int]], outs: list[int],
                 args: list[int], schema: KernelSchema | None, *, kind: str | None = None,
                 extra_args: tuple[str, ...] = ()) -> None:
        for _, a in ins:
            for t in self.tensor_args(a):
                self.ensure_source(t)
        names = [s.name for s in schema.args] if schema else []
        arg_text = [f"{names[i] if i < len(names) else f'arg{i}'}="
                    f"{V.short_text(self.program, self.values, a, self.producer)}" for i, a in ins]
        first_out = next((self.tensor(o) for o in outs if self.tensor(o) is not None), None)
        out_tensors = [t for o in outs for t in self.tensor_args(o)]
        in_qp, out_qp, requant = self.quant(target, ins, names, out_tensors)
        inputs: list[str] = []
        for i, a in ins:
            for t in self.tensor_args(a):
                src = self.producer.get(t)
                if src is None:
                    continue
                if src not in inputs:
                    inputs.append(src)
                tt = self.tensor(t)
                self.edges.append(EdgeSnapshot(src=src, dst=node_id, arg_index=i, dtype=V.dtype_of(tt),
                                               shape=tuple(int(s) for s in tt.sizes),
                                               qparams=self.value_qp.get(t) or dict(in_qp).get(i)))
        flags = self.tensor_flags(out_tensors[0], node_id) if out_tensors else ()
        for t in out_tensors[1:]:
            self.tensor_flags(t, node_id)
        self.nodes.append(NodeSnapshot(
            id=node_id, name=node_id, fx_op="call_function", target=target,
            kind=kind or classify("call_function", target, final=True),
            dtype=V.dtype_of(first_out) if first_out is not None else None,
            shape=tuple(int(s) for s in first_out.sizes) if first_out is not None else None,
            inputs=tuple(inputs), args=tuple(arg_text) + extra_args, input_qparams=tuple(sorted(in_qp)),
            output_qparams=out_qp, requant=requant, schema=schema.text if schema else "",
            flags=flags + (("instruction", str(pos)),),
            dim_order=tuple(int(d) for d in first_out.dim_order) if first_out is not None else None))
        for t in out_tensors:
            self.producer[t] = node_id
            place = V.planned(self.tensor(t)) if self.tensor(t) is not None else None
            if place is not None:
                self.written_at[place] = t
            if out_qp is not None:
                self.value_qp[t] = out_qp
        self.instruction_nodes.append(node_id)

    def quant(self, target: str, ins: list[tuple[int, int]], names: list[str], outs: list[int]
              ) -> tuple[list[tuple[int, QParam]], QParam | None, Any]:
        """Qparams from a quantize/dequantize kernel's own arguments; requantisation from a
        cortex_m kernel's offsets and multipliers/shifts (the snapshot code's decoder)."""
        named = {names[i] if i < len(names) else f"arg{i}": V.python_value(self.program, self.values, a)
                 for i, a in ins}
        if is_quant_boundary(target) and ("scale" in named or "scales" in named):
            qp = _qparam(named, target)
            if qp is None:
                return [], None, None
            if op_base_name(target).startswith("dequantize"):
                src = ins[0][1] if ins else None
                if src is not None:
                    self.value_qp.setdefault(src, qp)
                return [(0, qp)], None, None
            return [], qp, None
        if target.startswith("cortex_m.") and names:
            # the snapshot code's decoder reads argument names from `target._schema`
            op = SimpleNamespace(_schema=SimpleNamespace(arguments=[SimpleNamespace(name=n) for n in names]))
            fake = SimpleNamespace(target=op, args=[named.get(n) for n in names], kwargs={})
            return [], None, requant_from_cortex_m_args(fake)
        return [], None, None

    def build(self) -> None:
        for k, idx in enumerate(self.plan.inputs):
            idx = int(idx)
            if self.tensor(idx) is not None:
                self.value_node(idx, f"input_{k}", "placeholder", f"input_{k}", KIND_INPUT)
        for chain in self.plan.chains:
            for pos, ins in enumerate(chain.instructions):
                call = ins.instr_args
                kind = type(call).__name__
                if kind == "KernelCall":
                    self.kernel(pos, call)
                elif kind == "DelegateCall":
                    self.delegate(pos, call)
                elif kind == "MoveCall":
                    self.add_call(pos, self.unique("move"), "executorch_prim.move.default",
                                  [(0, int(call.move_from))], [int(call.move_to)],
                                  [int(call.move_from), int(call.move_to)], None)
                else:   # FreeCall, JumpFalseCall: control flow, no tensor compute
                    self.instruction_nodes.append("")
        outs = [int(o) for o in self.plan.outputs]
        for o in outs:
            self.ensure_source(o)
        self.nodes.append(NodeSnapshot(id="output", name="output", fx_op="output", target="output",
                                       kind=KIND_PLUMBING, inputs=tuple(dict.fromkeys(
                                           self.producer[o] for o in outs if o in self.producer))))
        for i, o in enumerate(outs):
            if o in self.producer and self.tensor(o) is not None:
                t = self.tensor(o)
                self.edges.append(EdgeSnapshot(src=self.producer[o], dst="output", arg_index=i,
                                               dtype=V.dtype_of(t), shape=tuple(int(s) for s in t.sizes),
                                               qparams=self.value_qp.get(o)))


def _qparam(named: dict[str, Any], target: str) -> QParam | None:
    try:
        dtype_code = named.get("dtype")
        dtype = V.SCALAR_TYPES.get(int(dtype_code), (str(dtype_code),))[0] if dtype_code is not None else "?"
        if "scales" in named or "per_channel" in target:
            scales = [float(s) for s in (named.get("scales") or [])]
            zps = named.get("zero_points") or [0]
            return QParam(dtype=dtype, scale=sum(scales) / max(len(scales), 1), zero_point=int(zps[0]),
                          qmin=int(named["quant_min"]), qmax=int(named["quant_max"]), per_channel=True,
                          axis=named.get("axis"), scales=tuple(scales), source="program args")
        scale = named["scale"]
        scale = scale[0] if isinstance(scale, list) else scale
        zp = named["zero_point"]
        zp = zp[0] if isinstance(zp, list) else zp
        return QParam(dtype=dtype, scale=float(scale), zero_point=int(zp), qmin=int(named["quant_min"]),
                      qmax=int(named["quant_max"]), source="program args")
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _processed_size(program: Any, delegate: Any) -> int:
    p = delegate.processed
    try:
        if int(p.location) == 0:            # inline
            return len(program.backend_delegate_data[int(p.index)].data)
        return int(getattr(program.segments[int(p.index)], "size", 0))
    except (IndexError, AttributeError, TypeError, ValueError):
        return 0


def plan_snapshot(pte_file: Any, plan_index: int = 0, *, stage: str = STAGE_PROGRAM, index: int = 0
                  ) -> tuple[GraphSnapshot, list[str]]:
    """(snapshot of execution plan `plan_index`, instruction index -> node id)."""
    program = pte_file.program
    plan = program.execution_plan[plan_index]
    b = _Builder(program, plan)
    b.build()
    consts = [n for n in b.nodes if n.kind == KIND_WEIGHT]
    const_bytes = sum(int(dict(n.flags).get("bytes", 0)) for n in consts)
    log = [f"kernel {k} is not known to the installed ExecuTorch/torch: its arguments are shown by position "
           "(the program may come from another ExecuTorch version)" for k in b.unknown_kernels]
    extra = {
        "method": plan.name, "operators": [f"{o.name}.{o.overload}" for o in plan.operators],
        "memory_plan": {"non_const_buffer_sizes": [int(s) for s in plan.non_const_buffer_sizes],
                        "tensors": b.planned},
        "constants": {"count": len(consts), "bytes": const_bytes},
        "delegates": [d.id for d in plan.delegates], "instruction_nodes": b.instruction_nodes,
        "unknown_kernels": b.unknown_kernels,
    }
    snap = GraphSnapshot(stage=stage, index=index, kind="final", nodes=tuple(b.nodes), edges=tuple(b.edges),
                         runnable_on_host=False, log=tuple(log), extra=extra)
    return snap, b.instruction_nodes
