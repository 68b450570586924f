"""How big the runner's ETDump debug buffer must be for `--etdump` (every intermediate output), read
from the program itself, and whether it fits the board's method-allocator pool.

Why: ExecuTorch's Arm runner allocates a fixed `ET_DEBUG_BUFFER_SIZE` (2 MiB) from its method allocator;
mv2's intermediate outputs do not fit, and the run ends in "Ran out of space to store intermediate
outputs" -> "failed to write tensor to debug buffer" -> UsageFault (issue 9, item 8). The bytes are known
before the run: with intermediate outputs on, the kernel wrappers log each kernel call's output tensors
into the buffer (devtools/etdump BufferDataSink: every blob starts 64-byte aligned), and each output is
a memory-planned tensor value whose sizes and dtype are in the execution plan.

Estimate: every planned tensor value that first appears as an argument of a kernel call (program inputs
excluded) is that call's output. CMSIS-NN scratch buffers are counted too although they are not logged:
the estimate is an upper bound by at most the scratch bytes."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError

ALIGN = 64                               # BufferDataSink's default alignment
DEFAULT_DEBUG_BUFFER = 2 * 1024 * 1024   # arm_executor_runner.cpp ET_DEBUG_BUFFER_SIZE default
DEFAULT_METHOD_POOL = 60 * 1024 * 1024   # ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE default
HEADROOM = 64 * 1024                     # method metadata, ETDump events, allocator alignment
_ELEMENT_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 12: 1, 13: 1, 14: 4, 15: 2,
                  22: 2, 27: 2, 28: 4, 29: 8}


def _align(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


@dataclass
class DebugBufferPlan:
    """Bytes the intermediate outputs need and what the runner's method allocator must hold."""

    outputs: int                  # logged output tensors
    need_bytes: int               # debug buffer bytes (64-byte aligned blobs)
    planned_bytes: int            # the program's memory-planned arena(s)
    buffer_size: int              # ET_DEBUG_BUFFER_SIZE to build the runner with

    def method_pool_need(self, uart_base64: bool) -> int:
        """Method-allocator bytes: planned arena + debug buffer (+ the runner's base64 buffer, 4/3 of
        the debug buffer, when the ETDump goes over the UART) + headroom."""
        b64 = (self.buffer_size * 4 + 2) // 3 + 4 if uart_base64 else 0
        return self.planned_bytes + self.buffer_size + b64 + HEADROOM


def _tensor_bytes(t: Any) -> int:
    n = 1
    for s in t.sizes:
        n *= int(s)
    return n * _ELEMENT_BYTES.get(int(getattr(t.scalar_type, "value", t.scalar_type)), 4)


def plan_from_program(program: Any, method: str = "forward") -> DebugBufferPlan:
    """The plan for one method of a deserialised Program (executorch.exir.schema)."""
    plan = next(p for p in program.execution_plan if p.name == method)
    seen = set(plan.inputs or [])
    total, count = 0, 0

    def visit(idx: int) -> None:
        nonlocal total, count
        if idx in seen:
            return
        seen.add(idx)
        val = plan.values[idx].val
        items = getattr(val, "items", None)
        if items is not None and not hasattr(val, "sizes"):        # TensorList: its tensors
            for i in items:
                visit(int(i))
            return
        if hasattr(val, "sizes") and getattr(val, "allocation_info", None) is not None:
            total += _align(_tensor_bytes(val))
            count += 1

    for chain in plan.chains or []:
        for ins in chain.instructions or []:
            args = getattr(ins.instr_args, "args", None)
            if args is not None and hasattr(ins.instr_args, "op_index"):   # KernelCall
                for a in args:
                    visit(int(a))
    planned = sum(int(b) for b in list(plan.non_const_buffer_sizes or [])[1:])
    size = max(DEFAULT_DEBUG_BUFFER, _align(total + HEADROOM, 64 * 1024))
    return DebugBufferPlan(count, total, planned, size)


def read_program(model: Path) -> Any:
    """The deserialised Program of a .pte/.bpte (ExecuTorch's own deserialiser); None when it is not one."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    from backend_core.target.build.ops import program_bytes

    try:
        return deserialize_pte_binary(program_bytes(Path(model).read_bytes())).program
    except Exception:  # noqa: BLE001  ExecuTorch raises plain exceptions on foreign bytes
        return None


def plan_for_model(model: Path) -> DebugBufferPlan:
    """The plan for a .pte/.bpte file."""
    program = read_program(model)
    if program is None:
        raise BadInputError(f"{model} is not an ExecuTorch program ExecuTorch can read: cannot size the debug buffer.",
                            "Pass a .pte/.bpte written by `cmlens lower` or ExecuTorch's to_executorch().")
    return plan_from_program(program)


def check_fits(plan: DebugBufferPlan, board: Any, uart_base64: bool, model_name: str) -> None:
    """BadInputError before any build when the intermediate outputs cannot fit the runner's method
    allocator on this board (the pool size comes from kernels/boards.json runner_pools)."""
    pool = dict(board.runner_pools).get("METHOD_ALLOCATOR", DEFAULT_METHOD_POOL)
    need = plan.method_pool_need(uart_base64)
    if need <= pool:
        return
    mib = 1024 * 1024
    how = " plus the base64 copy the runner prints on the UART" if uart_base64 else ""
    raise BadInputError(
        f"--etdump on {model_name}: its {plan.outputs} intermediate outputs need a {plan.buffer_size / mib:.1f} MiB "
        f"debug buffer{how}; with the program's {plan.planned_bytes / mib:.1f} MiB of planned memory that is "
        f"{need / mib:.1f} MiB, more than the runner's {pool / mib:.1f} MiB method allocator on {board.name}.",
        "Run without --etdump (PASS/FAIL and error stats need no debug buffer), or on a board with more "
        "memory (e.g. --target cortex-m55: mps3-an547, 60 MiB pool).")
