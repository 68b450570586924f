"""Read the memory plan out of a serialised `.pte`: what ExecuTorch itself planned, not a re-derivation.

`executorch.exir._serialize._program.deserialize_pte_binary(data).program.execution_plan[i]` holds
`non_const_buffer_sizes` (index 0 is the constant buffer, 1.. one per memory id), every value (tensors
with `allocation_info` = memory id + offset when planned, `data_buffer_idx` > 0 when constant) and the
instructions (kernel calls with their argument value indices) in execution order. Everything here is a
plain dataclass so the result can be shipped as JSON to the GUI, which never imports ExecuTorch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.target.memory.pte_reader import read_pte_file

# ExecuTorch ScalarType codes (schema.fbs) -> (name, bytes per element).
SCALAR_TYPES: dict[int, tuple[str, int]] = {
    0: ("uint8", 1), 1: ("int8", 1), 2: ("int16", 2), 3: ("int32", 4), 4: ("int64", 8),
    5: ("float16", 2), 6: ("float32", 4), 7: ("float64", 8), 11: ("bool", 1), 15: ("bfloat16", 2),
}


@dataclass(frozen=True)
class PlannedTensor:
    """One tensor value of the program."""

    value: int                        # index in execution_plan.values
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    mem_id: int | None = None         # planned: memory id (1.. = non_const_buffer_sizes index)
    offset: int | None = None         # planned: byte offset inside that buffer
    constant_buffer: int = 0          # > 0: index into the constant buffer (flash)
    dynamic: bool = False             # shape_dynamism != STATIC

    @property
    def planned(self) -> bool:
        return self.mem_id is not None


@dataclass(frozen=True)
class Instruction:
    """One instruction of the (first) chain: a kernel call, a delegate call or control flow."""

    index: int
    kind: str                         # KernelCall | DelegateCall | JumpFalseCall | MoveCall | FreeCall
    op: str = ""                      # e.g. "cortex_m::quantized_conv2d.out"
    args: tuple[int, ...] = ()        # value indices


@dataclass
class ProgramPlan:
    """The parts of a `.pte` that decide memory; `value_kinds` counts values by EValue type."""

    pte_bytes: int
    method: str
    buffer_sizes: list[int]           # non_const_buffer_sizes, index 0 = constants
    tensors: dict[int, PlannedTensor]
    instructions: list[Instruction]
    inputs: list[int]
    outputs: list[int]
    n_values: int
    n_delegates: int
    n_chains: int
    value_kinds: dict[str, int] = field(default_factory=dict)
    # Values that cost method-allocator memory, in value order: ("Tensor", value index) or
    # (list type, item count) -- the order Method::parse_values allocates them in.
    value_seq: list[tuple[str, int]] = field(default_factory=list)
    constant_bytes: int = 0           # weights, biases, requant tables, LUTs stored in the program
    constant_sizes: dict[int, int] = field(default_factory=dict)  # constant buffer index -> bytes
    mutable_bytes: int = 0

    @property
    def planned_bytes(self) -> list[int]:
        """One entry per memory id, as `non_const_buffer_sizes[1:]`."""
        return list(self.buffer_sizes[1:])


def _tensor(index: int, t: Any) -> PlannedTensor:
    code = int(getattr(t.scalar_type, "value", t.scalar_type))
    dtype, size = SCALAR_TYPES.get(code, (f"scalar_type_{code}", 1))
    shape = tuple(int(s) for s in t.sizes)
    numel = 1
    for s in shape:
        numel *= s
    info = t.allocation_info
    mem_id = offset = None
    if info is not None:
        mem_id = int(info.memory_id)
        offset = int(info.memory_offset_low) | (int(info.memory_offset_high) << 32)
    dyn = int(getattr(t.shape_dynamism, "value", t.shape_dynamism)) != 0
    return PlannedTensor(index, dtype, shape, numel * size, mem_id, offset, int(t.data_buffer_idx), dyn)


def _constant_sizes(program: Any, data: bytes) -> dict[int, int]:
    """Bytes of each constant buffer: inline `constant_buffer[i].storage`, or the constant segment's
    offsets (newer programs keep constants in a segment after the flatbuffer)."""
    sizes: dict[int, int] = {}
    for i, buf in enumerate(program.constant_buffer or []):
        if i and buf.storage:
            sizes[i] = len(buf.storage)
    seg = program.constant_segment
    offsets = list(seg.offsets or []) if seg is not None else []
    if len(offsets) > 1 and program.segments:
        seg_size = int(program.segments[seg.segment_index].size)
        ends = offsets[1:] + [seg_size]
        for i, (start, end) in enumerate(zip(offsets, ends)):
            if i:
                sizes[i] = int(end) - int(start)
    return sizes


def read_plan(data: bytes, method: int = 0) -> ProgramPlan:
    """Parse a `.pte` (not a `.bpte`: use `program_bytes()` first). BadInputError when it is not one."""
    if len(data) < 8 or data[4:6] != b"ET":
        raise BadInputError("Not an ExecuTorch program: the file has no ExecuTorch flatbuffer identifier (ET..).",
                            "Pass a .pte written by `cmlens lower --pte` or ExecuTorch's to_executorch().")
    try:
        pte = read_pte_file(data)      # torch-free when possible: a cached lowering's report imports no ExecuTorch
    except ImportError as e:   # pragma: no cover - the venv always has ExecuTorch
        raise BadInputError("ExecuTorch is not installed in this Python.", "Run `make run` to set up .venv.") from e
    except Exception as e:  # ExecuTorch raises plain exceptions on garbage
        raise BadInputError(f"Not an ExecuTorch program: {type(e).__name__}: {e}",
                            "Pass a .pte written by `cmlens lower --pte` or ExecuTorch's to_executorch().") from e
    program = pte.program
    if not program.execution_plan or method >= len(program.execution_plan):
        raise BadInputError("The program has no method to analyse.", "Export the model with a forward method.")
    try:
        return _plan(pte, program, program.execution_plan[method], data)
    except (TypeError, AttributeError, IndexError, KeyError) as e:
        raise BadInputError(f"The program's execution plan is incomplete ({type(e).__name__}: {e}).",
                            "Re-export it with ExecuTorch's to_executorch().") from e


def _plan(pte: Any, program: Any, ep: Any, data: bytes) -> ProgramPlan:
    from backend_core.target.memory.pte_reader import schema_module

    schema = schema_module()

    tensors: dict[int, PlannedTensor] = {}
    kinds: dict[str, int] = {}
    seq: list[tuple[str, int]] = []
    for i, v in enumerate(ep.values):
        val = v.val
        name = type(val).__name__
        kinds[name] = kinds.get(name, 0) + 1
        if isinstance(val, schema.Tensor):
            tensors[i] = _tensor(i, val)
            seq.append(("Tensor", i))
        elif isinstance(val, (schema.IntList, schema.TensorList, schema.OptionalTensorList)):
            seq.append((name, len(val.items)))
        elif isinstance(val, (schema.BoolList, schema.DoubleList, schema.String)):
            seq.append((name, 0))
    instructions: list[Instruction] = []
    chain = ep.chains[0] if ep.chains else None
    for j, ins in enumerate(chain.instructions if chain else []):
        a = ins.instr_args
        kind = type(a).__name__
        op = ""
        args: tuple[int, ...] = ()
        if isinstance(a, schema.KernelCall):
            o = ep.operators[a.op_index]
            op = f"{o.name}.{o.overload}" if o.overload else o.name
            args = tuple(int(x) for x in a.args)
        elif isinstance(a, schema.DelegateCall):
            op = f"delegate[{a.delegate_index}]"
            args = tuple(int(x) for x in a.args)
        instructions.append(Instruction(j, kind, op, args))
    extra_chains = sum(len(c.instructions) for c in ep.chains[1:])
    if extra_chains:
        kinds["_instructions_in_other_chains"] = extra_chains
    csizes = _constant_sizes(program, data)
    mutable = sum(len(b.data) for b in (pte.mutable_data or []) if getattr(b, "data", None) is not None)
    return ProgramPlan(
        pte_bytes=len(data), method=ep.name, buffer_sizes=[int(s) for s in ep.non_const_buffer_sizes],
        tensors=tensors, instructions=instructions, inputs=[int(i) for i in ep.inputs],
        outputs=[int(o) for o in ep.outputs], n_values=len(ep.values), n_delegates=len(ep.delegates),
        n_chains=len(ep.chains), value_kinds=kinds, value_seq=seq, constant_bytes=sum(csizes.values()),
        constant_sizes=csizes, mutable_bytes=mutable)


def program_bytes(data: bytes) -> bytes:
    """The `.pte` inside a bundled `.bpte` (or `data` itself when it is already a program)."""
    if data[4:6] == b"ET":            # flatbuffer file identifier "ET12": a program
        return data
    try:
        from executorch.devtools.bundled_program.serialize import (
            deserialize_from_flatbuffer_to_bundled_program,
        )
        bp = deserialize_from_flatbuffer_to_bundled_program(data)
        return bytes(bp.program)
    except Exception:  # noqa: BLE001 - not a bundle either: let read_plan() report it
        return data
