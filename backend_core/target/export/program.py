"""What a bundle needs to know about one lowered program, read from the `.pte` itself (ExecuTorch's own
flatbuffer, through memory.pte_reader): the ops to register (split by kernel library), the inputs and
outputs (dtype, shape, dim order, bytes) and the int8 quantisation of each I/O.

Why from the program and not the graph: the bundle must describe exactly what the runtime will load;
the quantisation of a float input is the `cortex_m::quantize_per_tensor` that reads it (its scale and
zero point are Double/Int values of the program), that of a float output the
`cortex_m::dequantize_per_tensor` that writes it."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from backend_core.target.memory.plan import SCALAR_TYPES, ProgramPlan, read_plan
from backend_core.target.memory.pte_reader import read_pte_file, schema_module
from backend_core.target.build.ops import program_bytes, read_program_ops
from backend_core.target.build.runner import portable_ops

QUANTIZE_OPS = ("cortex_m::quantize_per_tensor.out", "quantized_decomposed::quantize_per_tensor.out")
DEQUANTIZE_OPS = ("cortex_m::dequantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out")
# ExecuTorch ScalarType name -> C type of an I/O buffer element
C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
           "float32": "float", "float64": "double", "bool": "bool", "float16": "uint16_t", "bfloat16": "uint16_t"}


@dataclass(frozen=True)
class Quantization:
    """x_int8 = clamp(round(x / scale) + zero_point, qmin, qmax); x = (x_int8 - zero_point) * scale."""
    scale: float
    zero_point: int
    qmin: int
    qmax: int
    op: str                       # the program's op that applies it


@dataclass(frozen=True)
class TensorIO:
    """One method input or output as the caller's buffer must hold it."""
    index: int
    dtype: str
    shape: tuple[int, ...]
    dim_order: tuple[int, ...]
    nbytes: int
    quantization: Quantization | None = None

    @property
    def c_type(self) -> str:
        return C_TYPES.get(self.dtype, "uint8_t")

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def channels_last(self) -> bool:
        return tuple(self.dim_order) != tuple(range(len(self.dim_order)))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["shape"], d["dim_order"] = list(self.shape), list(self.dim_order)
        d["c_type"] = self.c_type
        return d


@dataclass
class ProgramFacts:
    """The program as the bundle sees it."""
    pte: bytes
    plan: ProgramPlan
    ops: list[str]                                # every op of the program, table order
    inputs: list[TensorIO] = field(default_factory=list)
    outputs: list[TensorIO] = field(default_factory=list)

    @property
    def cortex_m_ops(self) -> list[str]:
        return sorted(o for o in self.ops if o.startswith("cortex_m::"))

    @property
    def portable_ops(self) -> list[str]:
        """aten::/dim_order_ops::/quantized_decomposed:: ops: portable (or quantized) kernels, the fallbacks."""
        return portable_ops(self.ops)

    @property
    def other_ops(self) -> list[str]:
        """Ops no kernel library of the bundle registers (delegates, prim ops the runtime has built in)."""
        known = set(self.cortex_m_ops) | set(self.portable_ops)
        return [o for o in self.ops if o not in known]

    @property
    def selected_ops(self) -> list[str]:
        """The selective-build list: every op a kernel library must register, in EXECUTORCH_SELECT_OPS_LIST form."""
        return self.cortex_m_ops + self.portable_ops


def _scalar(ep: Any, index: int) -> float | int | None:
    val = ep.values[index].val
    for attr in ("double_val", "int_val"):
        if hasattr(val, attr):
            return getattr(val, attr)
    return None


def _tensor_io(ep: Any, index: int, position: int) -> TensorIO:
    t = ep.values[index].val
    code = int(getattr(t.scalar_type, "value", t.scalar_type))
    dtype, size = SCALAR_TYPES.get(code, (f"scalar_type_{code}", 1))
    shape = tuple(int(s) for s in t.sizes)
    order = tuple(int(d) for d in (t.dim_order or range(len(shape))))
    n = 1
    for s in shape:
        n *= s
    return TensorIO(position, dtype, shape, order, n * size)


def _qparams(ep: Any, ins_args: list[int], op: str) -> Quantization | None:
    scale, zero_point, qmin, qmax = [_scalar(ep, a) for a in ins_args[1:5]]
    if scale is None or zero_point is None or qmin is None or qmax is None:
        return None
    return Quantization(float(scale), int(zero_point), int(qmin), int(qmax), op)


def read_facts(data: bytes) -> ProgramFacts:
    """Facts of a `.pte` or `.bpte` (the program inside it). BadInputError when it is not a program."""
    pte = program_bytes(data)
    plan = read_plan(pte)
    ops = read_program_ops(pte)
    schema = schema_module()
    ep = read_pte_file(pte).program.execution_plan[0]
    facts = ProgramFacts(pte, plan, ops)
    readers: dict[int, Quantization] = {}      # value index -> the quantize op reading it (a float input)
    writers: dict[int, Quantization] = {}      # value index -> the dequantize op writing it (a float output)
    chain = ep.chains[0] if ep.chains else None
    for ins in (chain.instructions if chain else []):
        a = ins.instr_args
        if not isinstance(a, schema.KernelCall):
            continue
        o = ep.operators[a.op_index]
        name = f"{o.name}.{o.overload}" if o.overload else o.name
        args = [int(x) for x in a.args]
        if name in QUANTIZE_OPS and args:
            q = _qparams(ep, args, name)
            if q is not None:
                readers.setdefault(args[0], q)
        elif name in DEQUANTIZE_OPS and args:
            q = _qparams(ep, args, name)
            if q is not None:
                writers[args[-1]] = q
    for pos, idx in enumerate(int(i) for i in ep.inputs):
        io = _tensor_io(ep, idx, pos)
        facts.inputs.append(replace(io, quantization=readers.get(idx)))
    for pos, idx in enumerate(int(i) for i in ep.outputs):
        io = _tensor_io(ep, idx, pos)
        facts.outputs.append(replace(io, quantization=writers.get(idx)))
    return facts
