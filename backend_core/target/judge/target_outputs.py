"""The target's outputs against the bundle's expected outputs, value by value, in output steps.

The runner prints every output element (`Output[i][j]: (float) %f`, storage order: a channels-last
output is printed channels-last) or writes it raw to `out-<i>.bin` (semihosting). The bundle stores its
expected outputs in the same dim order (pipeline.program_files._carry_dim_orders), so element j matches
element j. `%f` keeps 6 decimals: a quantized output is compared on its integer grid (round(v / step)),
which that precision resolves exactly for any step above 1e-5; a float output within 1e-6."""
from __future__ import annotations

from typing import Any, Sequence

from backend_core.target.judge.steps import OutputDifference, compare

PRINT_RESOLUTION = 1e-6        # `%f`


def printed_outputs(outputs: Sequence[Any]) -> list[Any]:
    """UART `OutputValue`s (output, index, dtype, value) -> one numpy array per output, storage order."""
    import numpy as np

    by_out: dict[int, dict[int, float]] = {}
    for o in outputs:
        try:
            value = float(o.value)
        except (TypeError, ValueError):
            value = float("nan")
        by_out.setdefault(int(o.output), {})[int(o.index)] = value
    arrays = []
    for i in sorted(by_out):
        vals = by_out[i]
        a = np.full(max(vals) + 1, np.nan)
        for j, v in vals.items():
            a[j] = v
        arrays.append(a)
    return arrays


def compare_printed(actual: Any, expected: Any, step: float | None, output: int = 0) -> OutputDifference:
    """Printed (6-decimal) target values against exact expected ones."""
    import numpy as np

    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    if a.size != e.size:
        return OutputDifference(output, int(e.size), int(e.size), float("inf"), step, None,
                                f"{a.size} printed vs {e.size} expected values")
    if step and step > 1e-5:
        qa, qe = np.rint(a / step), np.rint(e / step)
        d = np.abs(qa - qe)
        differing = int((d > 0).sum() + (np.isnan(a) & ~np.isnan(e)).sum())
        max_steps = float(np.nanmax(d)) if d.size else 0.0
        return OutputDifference(output, int(e.size), differing, max_steps * step, step, max_steps)
    d = np.abs(a - e)
    close = d <= PRINT_RESOLUTION + 1e-6 * np.abs(e)
    return OutputDifference(output, int(e.size), int((~close).sum()),
                            float(np.nanmax(np.where(close, 0.0, d))) if d.size else 0.0, step, None)


def target_vs_expected(actual: Sequence[Any], expected: Sequence[Any], steps: Sequence[float | None],
                       printed: bool = True) -> list[OutputDifference]:
    """Every output: `printed` (UART, 6 decimals) or raw (out-<i>.bin: exact comparison)."""
    out = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        step = steps[i] if i < len(steps) else None
        out.append(compare_printed(a, e, step, i) if printed else compare(a, e, step, i))
    return out
