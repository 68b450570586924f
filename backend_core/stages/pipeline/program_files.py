"""Serialise the lowered program: `.pte`, and a bundled `.bpte` whose expected outputs are the lowered
program itself run on the host (the final edge program: cortex_m ops have Python reference kernels).

Why the lowered program and not the PT2E fake-quant model: the target runs the lowered integer program,
so a correct target matches it bit for bit and the runner can check with atol 0. The fake-quant model is
a different computation (float ops on a simulated grid: GELU's lookup table, requantisation by a fixed-
point multiplier); its outputs came out 1-11 steps away on correct targets (gelu_conv, mv3, mv2: issue
16) and a user could not tell that from a target bug. `bundle_program` returns both sets of outputs so
the verdict can report the quantisation difference beside the exact check."""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

from backend_core.common.errors import StageFailedError


def _executorch_manager(final_program: Any) -> Any:
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.exir import EdgeProgramManager

    # to_executorch() mutates its input: work on a copy so snapshots/numerics stay valid.
    epm = EdgeProgramManager({"forward": copy.deepcopy(final_program)},
                             compile_config=cortex_m_edge_compile_config())
    return epm.to_executorch()


def pte_bytes(final_program: Any) -> bytes:
    try:
        return bytes(_executorch_manager(final_program).buffer)
    except Exception as e:
        raise StageFailedError("to_executorch", f"Serialising the .pte failed: {type(e).__name__}: {e}",
                               "The final graph could not be planned/serialised by ExecuTorch.") from e


def program_io_dim_orders(program: Any, method: str = "forward") -> tuple[list[Any], list[Any]]:
    """(inputs, outputs): the dim order the program's method gives each tensor input/output (None for a
    non-tensor value), read from the serialised execution plan: what the runtime builds the method's
    tensors (and their strides) from."""
    plan = next(p for p in program.execution_plan if p.name == method)

    def order(idx: int) -> Any:
        val = plan.values[idx].val
        d = getattr(val, "dim_order", None)
        return None if d is None else tuple(int(x) for x in d)

    return [order(i) for i in plan.inputs], [order(i) for i in plan.outputs]


def bytes_in_dim_order(t: Any, dim_order: tuple[int, ...]) -> bytes:
    """The bytes of `t` laid out in `dim_order`: what the runtime reads a tensor of that dim order from."""
    import torch

    return t.detach().permute(*dim_order).contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def _carry_dim_orders(schema_values: Any, tensors: Any, dim_orders: list[Any]) -> None:
    """Give each bundled tensor the method's dim order and its bytes in that order.

    ExecuTorch's BundledProgram bundles every tensor contiguous (exir TensorSpec.from_tensor(const=True)
    calls .contiguous(): dim order 0..n-1 and NCHW bytes, in 1.5.1 and in main of 2026-08), while the
    runtime's bundle check (bundled_program.cpp `tensors_are_close`) asserts that an expected output
    has the strides of the method's output. A legacy-flow program gives 4-D outputs channels-last, so
    the check aborted (issue 9: conv -> GELU -> upsample, UsageFault), and a 3-channel channels-last
    input arrived scrambled. The dim order is written from the program itself, not inferred from
    strides: for size-1 dims (a 1-channel channels-last tensor) strides do not say the order."""
    for value, t, order in zip(schema_values, tensors, dim_orders):
        val = value.val
        if order is None or not hasattr(val, "dim_order") or len(val.dim_order) != len(order):
            continue
        if tuple(order) != tuple(range(len(order))):
            val.data = bytes_in_dim_order(t, tuple(order))
        val.dim_order = list(order)


def bundled_program(et_program: Any, inputs: Any, expected: Any) -> Any:
    """BundledProgram of `et_program` (ExecutorchProgramManager) with one test case whose tensors carry
    the method's own dim orders (see _carry_dim_orders)."""
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram

    in_orders, out_orders = program_io_dim_orders(et_program.executorch_program)
    bp = BundledProgram(et_program, [MethodTestSuite(method_name="forward", test_cases=[
        MethodTestCase(inputs=list(inputs), expected_outputs=list(expected))])])
    case = bp.serialize_to_schema().method_test_suites[0].test_cases[0]   # cached: serialisation reuses it
    _carry_dim_orders(case.inputs, inputs, in_orders)
    _carry_dim_orders(case.expected_outputs, expected, out_orders)
    return bp


@dataclass
class Bundle:
    """A .bpte and the host outputs behind it: `lowered` (the expected outputs, logical layout) and
    `fake_quant` (the PT2E model's, for the quantisation difference), one numpy array per output, and the
    quantisation step (scale) of each output (None for a float or integer output)."""

    bpte: bytes
    lowered: list[Any] = field(default_factory=list)
    fake_quant: list[Any] = field(default_factory=list)
    steps: list[float | None] = field(default_factory=list)
    host_seconds: float = 0.0        # the lowered program's host run (its cost is what naming costs, x2-3)


def _as_tuple(out: Any) -> tuple:
    import torch

    if isinstance(out, torch.Tensor):
        return (out,)
    return tuple(out)


def expected_outputs_from_lowered(final_program: Any, inputs: tuple) -> tuple:
    """The lowered program run on the host: what a correct target computes, bit for bit.

    `final_program.module()` runs the final edge graph with the cortex_m ops' reference kernels (the
    module is built from a copy: running it must not touch the program that is serialised next)."""
    import torch

    from backend_core.stages.pipeline.int_conv import install_int_dilated_conv

    install_int_dilated_conv()          # the reference of a dilated int8 conv (DeepLabV3+, CGNet)
    with torch.no_grad():
        return _as_tuple(copy.deepcopy(final_program).module()(*inputs))


def output_steps_of(final_program: Any) -> list[float | None]:
    """The quantisation step of each graph output written by a `cortex_m.dequantize_per_tensor` (its
    scale argument), None for any other output."""
    graph = final_program.graph_module.graph
    out_node = next(n for n in graph.nodes if n.op == "output")
    outs = out_node.args[0] if isinstance(out_node.args[0], (list, tuple)) else [out_node.args[0]]
    steps: list[float | None] = []
    for o in outs:
        target = str(getattr(o, "target", ""))
        scale = o.args[1] if "dequantize_per_tensor" in target and len(o.args) > 1 else None
        steps.append(float(scale) if isinstance(scale, (int, float)) else None)
    return steps


def _numpy(t: Any) -> Any:
    return t.detach().contiguous().cpu().numpy()


def bundle_program(final_program: Any, fake_quant_module: Any, inputs: tuple,
                   adjust: Any = None) -> Bundle:
    """The .bpte (expected outputs: the lowered program on the host) plus both host output sets.
    `adjust(expected, host_seconds) -> expected` may replace the expected outputs (the known
    host/CMSIS-NN kernel differences computed the target's way: lowering/references.py)."""
    import torch
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer,
    )

    try:
        t0 = time.perf_counter()
        expected = expected_outputs_from_lowered(final_program, inputs)
        host_seconds = time.perf_counter() - t0
        if adjust is not None:
            expected = adjust(expected, host_seconds)
        fake_quant: tuple = ()
        if fake_quant_module is not None:
            with torch.no_grad():
                fake_quant = _as_tuple(fake_quant_module(*inputs))
        et = _executorch_manager(final_program)
        data = bytes(serialize_from_bundled_program_to_flatbuffer(bundled_program(et, list(inputs), list(expected))))
    except Exception as e:
        raise StageFailedError("bundled program", f"Building the .bpte failed: {type(e).__name__}: {e}",
                               "The expected outputs come from the lowered program run on the host.") from e
    return Bundle(data, [_numpy(t) for t in expected], [_numpy(t) for t in fake_quant],
                  output_steps_of(final_program), host_seconds)


def bpte_bytes(final_program: Any, reference_module: Any, inputs: tuple) -> bytes:
    """The .bpte alone (expected outputs: the lowered program on the host). `reference_module` (the
    fake-quant model) is not run here: bundle_program returns its outputs for the comparison."""
    del reference_module
    return bundle_program(final_program, None, inputs).bpte


def write_bytes(path: str, data: bytes) -> str:
    """Written whole or not at all (an interrupted run leaves no half program)."""
    from backend_core.common.files import write_atomic

    return write_atomic(path, data)
