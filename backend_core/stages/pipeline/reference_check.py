"""Is a comparison against these reference outputs worth anything? A PASS against near-constant
reference outputs proves nothing: random-weight MobileNetV2 gave max |y| = 3.4e-9, all 1,000 outputs
were 0.0 on the target, and the bundle check PASSed with zero error (issue 9, item 7).

Degenerate (any one): every value 0; every value equal; every value within the comparison's absolute
tolerance of 0 (a target printing zeros would PASS); or, for a quantized output, at most two distinct
levels of the output's quantization step among many outputs (the int8 output is nearly constant).
Used by `cmlens run` (the .bpte's expected outputs) and available to the numerics."""
from __future__ import annotations

from typing import Any, Sequence

ADVICE = "this PASS compares near-constant outputs; use real weights or calibration data"
_DTYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 6: "float32", 7: "float64", 11: "bool"}


def degenerate_reason(values: Any, atol: float | None = None, step: float | None = None) -> str:
    """Why `values` (array-like, one output) make a meaningless reference, or "" when they do not.
    `step` is the output's quantization step (scale) when known."""
    import numpy as np

    a = np.asarray(values, dtype=np.float64).ravel()
    if a.size == 0:
        return ""
    lo, hi, peak = float(a.min()), float(a.max()), float(np.abs(a).max())
    if peak == 0.0:
        return f"all {a.size} reference outputs are 0"
    if lo == hi:
        return f"all {a.size} reference outputs equal {lo:.6g}"
    if atol is not None and peak <= atol:
        return (f"every reference output is within the tolerance of 0 (max |y| = {peak:.3g} <= atol {atol:g}): "
                "a target that outputs only zeros would PASS")
    if a.size >= 8:
        levels = np.unique(a).size
        if step is not None and step > 0 and (hi - lo) < 2 * step:
            return (f"the reference outputs span {hi - lo:.3g}, less than two quantization steps ({step:.3g}): "
                    "after int8 quantization they are nearly constant")
        if levels <= 2:
            return f"the {a.size} reference outputs take only {levels} distinct values"
    return ""


def expected_outputs(bpte: bytes) -> list[Any]:
    """The expected outputs of every test case of a .bpte, as numpy arrays (ExecuTorch's deserialiser)."""
    import numpy as np
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program

    try:
        bp = deserialize_from_flatbuffer_to_bundled_program(bpte)
    except Exception:  # noqa: BLE001  not a bundle ExecuTorch can read: nothing to judge (the runner will say)
        return []
    out = []
    for suite in bp.method_test_suites:
        for case in suite.test_cases:
            for v in case.expected_outputs:
                t = v.val
                dtype = _DTYPES.get(int(getattr(t.scalar_type, "value", t.scalar_type)))
                if dtype is None or not hasattr(t, "data"):
                    continue
                out.append(np.frombuffer(bytes(t.data), dtype=dtype))
    return out


def bundle_warnings(bpte: bytes, atol: float | None) -> list[str]:
    """One warning per degenerate expected output of a .bpte, each ending with the advice."""
    found = []
    outs: Sequence[Any] = expected_outputs(bpte)
    for i, values in enumerate(outs):
        reason = degenerate_reason(values, atol)
        if reason:
            name = "the reference output" if len(outs) == 1 else f"reference output {i}"
            found.append(f"{name} is degenerate: {reason}; {ADVICE}")
    return found


def output_steps(program: Any, method: str = "forward") -> list[float | None]:
    """The quantization step (scale) of each method output that a `cortex_m::dequantize_per_tensor`
    writes, from a deserialised Program; None for an output with no such producer (float or int)."""
    if program is None:
        return []
    plan = next((p for p in program.execution_plan or [] if p.name == method), None)
    if plan is None:
        return []
    producer: dict[int, float] = {}
    for chain in plan.chains or []:
        for ins in chain.instructions or []:
            a = ins.instr_args
            if not hasattr(a, "op_index"):
                continue
            if "dequantize_per_tensor" not in plan.operators[a.op_index].name or len(a.args) < 2:
                continue
            scale = getattr(plan.values[a.args[1]].val, "double_val", None)
            if scale is not None:
                producer[int(a.args[-1])] = float(scale)
    return [producer.get(int(o)) for o in plan.outputs or []]


def fail_hint(max_abs_error: float | None, steps: list[float | None], qtol: int) -> str:
    """For a FAIL whose largest error is a few output quantization steps: say so, and how ExecuTorch's
    own Cortex-M tests accept it (atol relaxed by qtol steps: 1 for LUT activations, 10 for MobileNetV2,
    20 for MobileNetV3, in backends/cortex_m/test/). "" for larger errors."""
    known = [s for s in steps if s]
    if max_abs_error is None or not known:
        return ""
    step = max(known)
    lsb = max_abs_error / step
    if lsb > 20.0 + 1e-6:
        return ""
    need = int(lsb + 0.999)
    return (f"the largest error is {lsb:.1f} output quantization step(s) (scale {step:.4g}): rounding of the "
            "integer kernels against the float fake-quant reference, compounded layer by layer (per-layer gaps "
            "with --etdump show whether the target matches the lowered program). ExecuTorch's own Cortex-M tests "
            "relax atol by qtol steps (1 for LUT activations, 10 for MobileNetV2, 20 for MobileNetV3): rerun with "
            f"--qtol {need}" + (f" (now {qtol})" if qtol else ""))
