"""What ExecuTorch's runtime takes from the method allocator to load a program, computed from the
program itself by replaying the allocations `Method::load` makes (ExecuTorch runtime/executor/
method.cpp `parse_values` + `init`, tensor_parser_portable.cpp `parseTensor`, tensor_parser*.cpp
list parsing) through the same bump allocator (`MemoryAllocator::allocate`: align the cursor to
the type's alignment, then advance by the size; the padding counts as used).

Plus what the stock Arm runner (examples/arm/executor_runner/arm_executor_runner.cpp) puts in the
same pool: the planned buffers (one `allocate(size, 16)` per memory id, before the method) and, with
intermediate-output ETDump, the 2 MiB debug buffer; the non-bundled input path allocates an EValue
list. The runner prints the same split (`method_allocator_planned/loaded/input/executor/used`), which
`runner_figures.py` parses to put beside this prediction.

Type sizes are those of a 32-bit Arm build (every Cortex-M): measured with arm-none-eabi-g++ 12
(`sizeof`/`alignof` of EValue, TensorImpl, BoxedEvalueList, ... against ExecuTorch's headers, for
cortex-m0 and cortex-m55: identical). On ds_cnn (M55 and M4) and mobilenet_v1_025 (M55) the replay
equals the runner's `method_allocator_loaded` to the byte (11040, 10984, 28868).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from backend_core.target.memory.plan import ProgramPlan

# (size, alignment) on 32-bit Arm, runtime of ExecuTorch 1.5.
EVALUE = (16, 8)
TENSOR_IMPL = (32, 4)
BOXED_LIST = (12, 4)              # BoxedEvalueList<T> for int64, Tensor, optional<Tensor>
ARRAY_REF = (8, 4)                # ArrayRef<bool|double|char>
TENSOR = (4, 4)                   # portable Tensor = one TensorImpl*
OPTIONAL_TENSOR = (8, 4)
POINTER = (4, 4)                  # EValue*, OpFunction
INT64 = (8, 8)
SIZES = STRIDES = (4, 4)          # SizesType / StridesType (int32)
DIM_ORDER = (1, 1)
SPAN = (8, 4)                     # InstructionArgs = Span<EValue*>
CHAIN = (16, 4)
BACKEND_DELEGATE = (40, 8)
TENSOR_META = (12, 4)
PLATFORM_ALLOCATOR = (28, 4)
TENSOR_DIMENSION_LIMIT = 16       # kTensorDimensionLimit

PLANNED_ALIGNMENT = 16            # the runner: method_allocator->allocate(buffer_size, 16)
ET_DEBUG_BUFFER_SIZE = 2 * 1024 * 1024   # runner default, intermediate-output ETDump


class PoolFull(Exception):
    """The replay ran past a pool's end: what the runtime's allocator would refuse."""

    def __init__(self, requested: int, available: int, kind: str) -> None:
        super().__init__(f"{requested}B requested (adjusted for alignment), {available}B available ({kind})")
        self.requested, self.available, self.kind = requested, available, kind


class _Bump:
    """MemoryAllocator::allocate's arithmetic: bytes used include alignment padding. With a capacity,
    the first allocation that does not fit raises PoolFull with the runtime's own two numbers."""

    def __init__(self, start: int = 0, capacity: int | None = None) -> None:
        self.cur = start
        self.capacity = capacity
        self.by_kind: dict[str, int] = {}

    def alloc(self, size: int, align: int, kind: str) -> None:
        start = (self.cur + align - 1) // align * align
        used = start + size - self.cur
        if self.capacity is not None and self.cur + used > self.capacity:
            raise PoolFull(used, self.capacity - self.cur, kind)
        self.by_kind[kind] = self.by_kind.get(kind, 0) + used
        self.cur = start + size

    def list(self, n: int, t: tuple[int, int], kind: str) -> None:
        self.alloc(n * t[0], t[1], kind)


@dataclass
class MethodAllocEstimate:
    """The method allocator's use, in the runner's own terms."""

    planned: int                       # planned buffers (method_allocator_planned)
    loaded: int                        # Method::load (+ debug buffer) (method_allocator_loaded)
    input: int                         # method_allocator_input
    loaded_by_kind: dict[str, int] = field(default_factory=dict)
    temp_pool_min: int = 0             # smallest temp pool that keeps TensorMeta off the method pool
    max_kernel_args: int = 0
    etdump_debug_buffer: int = 0

    @property
    def used(self) -> int:
        """method_allocator_used (executor adds 0 for these programs)."""
        return self.planned + self.loaded + self.input

    def to_dict(self) -> dict:
        return {"planned": self.planned, "loaded": self.loaded, "input": self.input, "used": self.used,
                "loaded_by_kind": dict(self.loaded_by_kind), "temp_pool_min": self.temp_pool_min,
                "max_kernel_args": self.max_kernel_args, "etdump_debug_buffer": self.etdump_debug_buffer}


def _load_method(plan: ProgramPlan, b: _Bump, temp_pool: int | None) -> None:
    """The allocations of Program::load_method -> Method::load -> Method::init, in order."""
    if temp_pool is None:
        b.alloc(*PLATFORM_ALLOCATOR, "allocator")
    b.list(plan.n_values, EVALUE, "values")
    if plan.inputs:
        b.list(len(plan.inputs), (1, 1), "values")           # input_set_ (bool per input)
    for kind, n in plan.value_seq:
        if kind == "Tensor":
            t = plan.tensors[n]
            d = len(t.shape)
            if t.dynamic:
                b.list(d, SIZES, "tensor metadata")
                b.list(d, DIM_ORDER, "tensor metadata")
            b.list(d, STRIDES, "tensor metadata")
            b.alloc(*TENSOR_IMPL, "tensor metadata")
        elif kind == "IntList":
            b.list(n, POINTER, "lists")
            b.list(n, INT64, "lists")
            b.alloc(*BOXED_LIST, "lists")
        elif kind == "TensorList":
            b.list(n, TENSOR, "lists")
            b.list(n, POINTER, "lists")
            b.alloc(*BOXED_LIST, "lists")
        elif kind == "OptionalTensorList":
            b.list(n, POINTER, "lists")
            b.list(n, OPTIONAL_TENSOR, "lists")
            b.alloc(*BOXED_LIST, "lists")
        else:                                               # BoolList, DoubleList, String
            b.alloc(*ARRAY_REF, "lists")
    b.list(plan.n_delegates, BACKEND_DELEGATE, "delegates")
    b.list(plan.n_chains, CHAIN, "kernel calls")
    n = len(plan.instructions)
    b.list(n, POINTER, "kernel calls")                      # OpFunction per instruction
    b.list(n, SPAN, "kernel calls")                         # InstructionArgs per instruction
    for ins in plan.instructions:
        if ins.kind in ("KernelCall", "DelegateCall"):
            b.list(len(ins.args), POINTER, "kernel calls")  # EValue* argument list
            if ins.kind == "KernelCall" and not _meta_in_temp(len(ins.args), temp_pool):
                b.list(len(ins.args), TENSOR_META, "kernel calls")
                for a in ins.args:
                    pt = plan.tensors.get(a)
                    if pt is not None:
                        b.list(len(pt.shape), DIM_ORDER, "kernel calls")


def _meta_in_temp(n_args: int, temp_pool: int | None) -> bool:
    """resolve_operator puts TensorMeta in the temp allocator when it is at least this big."""
    if temp_pool is None:
        return True        # PlatformMemoryAllocator (heap) is the temp allocator
    need = TENSOR_META[0] * n_args + DIM_ORDER[0] * TENSOR_DIMENSION_LIMIT * n_args
    return temp_pool > 0 and temp_pool >= need


def estimate_method_allocator(plan: ProgramPlan, *, temp_pool: int | None = 0x200000,
                              etdump_intermediates: bool = False, bundled_inputs: bool = True,
                              debug_buffer_bytes: int = ET_DEBUG_BUFFER_SIZE,
                              pool_size: int | None = None) -> MethodAllocEstimate:
    """Replay the stock Arm runner's use of its method allocator pool for this program.

    temp_pool: the runner's ET_ARM_BAREMETAL_SCRATCH_TEMP_ALLOCATOR_POOL_SIZE (default 2 MiB);
    etdump_intermediates: the runner was built with ET_DUMP_INTERMEDIATE_OUTPUTS (a debug buffer of
    `debug_buffer_bytes`, ET_DEBUG_BUFFER_SIZE, 2 MiB by default);
    bundled_inputs: a .bpte supplies the inputs (no EValue list for them);
    pool_size: replay into a pool of this size: PoolFull at the first allocation the runtime refuses."""
    b = _Bump(0, pool_size)
    for size in plan.buffer_sizes[1:]:
        if size:
            b.alloc(size, PLANNED_ALIGNMENT, "planned")
    planned = b.cur
    debug = 0
    if etdump_intermediates:
        before = b.cur
        b.alloc(debug_buffer_bytes, 16, "etdump debug buffer")
        debug = b.cur - before
    start = b.cur
    _load_method(plan, b, temp_pool)
    loaded = b.cur - start + debug
    input_start = b.cur
    if not bundled_inputs:
        b.list(len(plan.inputs), EVALUE, "inputs")
    kinds = {k: v for k, v in b.by_kind.items() if k not in ("planned", "inputs")}
    max_args = max((len(i.args) for i in plan.instructions if i.kind == "KernelCall"), default=0)
    temp_min = (TENSOR_META[0] + DIM_ORDER[0] * TENSOR_DIMENSION_LIMIT) * max_args
    return MethodAllocEstimate(planned, loaded, b.cur - input_start, kinds,
                               (temp_min + 15) // 16 * 16, max_args, debug)


def etdump_bytes_bound(plan: ProgramPlan, intermediates: bool = False) -> int:
    """Upper bound of the ETDump the runner's ETDumpGen builds: 512 B + 160 B per instruction (measured:
    ds_cnn's 14 instructions gave 2,416 B with the BundleIO run); intermediate outputs add an event per
    instruction (counted twice)."""
    return 512 + (320 if intermediates else 160) * len(plan.instructions)


def etdump_base64_bound(plan: ProgramPlan, debug_buffer_bytes: int = 0) -> int:
    """Upper bound of the buffer the runner takes from the method pool AFTER the run to print the
    ETDump (and the debug buffer) as base64 on the UART: `allocate(base64_size + 1)`. The ETDump's size
    is only known after the run: bounded by 512 B + 160 B per instruction (measured: ds_cnn's 14
    instructions gave 1,836 B). Not part of method_allocator_used, which the runner prints before."""
    raw = max(etdump_bytes_bound(plan), debug_buffer_bytes)
    return (raw + 2) // 3 * 4 + 1 + 4


def first_refusal(plan: ProgramPlan, pool_size: int, **kw: object) -> PoolFull | None:
    """The first allocation a method pool of `pool_size` bytes refuses (None: it fits), i.e. the
    runtime's "Memory allocation failed: <requested>B requested (adjusted for alignment), <available>B
    available" line; a planned buffer that does not fit shows as kind "planned"."""
    try:
        estimate_method_allocator(plan, pool_size=pool_size, **kw)  # type: ignore[arg-type]
    except PoolFull as e:
        return e
    return None
