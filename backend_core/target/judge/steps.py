"""Two sets of model outputs compared in output quantisation steps (plain numpy, no torch).

Why steps: the lowered program's outputs are int8 values dequantized with one scale per output, so two
correct-looking runs differ by whole multiples of that scale. "max 1 step in 4/2048 values" says what a
max-abs error of 0.0146 hides: how far (in the grid the target computes on) and how often."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence


@dataclass(frozen=True)
class OutputDifference:
    """One output tensor: `actual` against `reference`, value by value."""

    output: int                  # index of the method output
    values: int                  # elements compared
    differing: int               # elements that are not bit-identical
    max_abs: float               # largest |actual - reference| in real units
    step: float | None = None    # the output's quantisation step (scale); None for a float output
    max_steps: float | None = None   # max_abs / step (None without a step)
    shape_mismatch: str = ""     # "(1, 10) vs (1, 12)" when the tensors cannot be compared

    @property
    def identical(self) -> bool:
        return not self.shape_mismatch and self.differing == 0

    def text(self) -> str:
        """"bit for bit", "max 1 step in 4/2048 values" or "max |d| 0.41 in 3/10 values" (float)."""
        if self.shape_mismatch:
            return f"shapes differ ({self.shape_mismatch})"
        if self.identical:
            return f"bit for bit ({self.values} values)"
        if self.max_steps is not None:
            n = round(self.max_steps)
            size = f"{n} step{'s' if n != 1 else ''}" if abs(self.max_steps - n) < 0.01 else f"{self.max_steps:.2f} steps"
            return f"max {size} in {self.differing}/{self.values} values"
        return f"max |d| {self.max_abs:.4g} in {self.differing}/{self.values} values"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "OutputDifference":
        return OutputDifference(**{k: d[k] for k in OutputDifference.__dataclass_fields__ if k in d})


def compare(actual: Any, reference: Any, step: float | None = None, output: int = 0) -> OutputDifference:
    """`actual` vs `reference` (array-likes of the same logical shape) in steps of `step`."""
    import numpy as np

    a = np.asarray(actual)
    r = np.asarray(reference)
    if a.shape != r.shape:
        if a.size != r.size:
            return OutputDifference(output, int(r.size), int(r.size), math.inf, step, None,
                                    f"{tuple(a.shape)} vs {tuple(r.shape)}")
        a = a.reshape(r.shape)
    a64, r64 = a.astype(np.float64).ravel(), r.astype(np.float64).ravel()
    both_nan = np.isnan(a64) & np.isnan(r64)
    differ = (a.ravel() != r.ravel()) & ~both_nan
    d = np.abs(a64 - r64)
    d[both_nan] = 0.0
    max_abs = float(d.max()) if d.size else 0.0
    if not math.isfinite(max_abs):
        max_abs = math.inf
    steps = (max_abs / step) if (step and math.isfinite(max_abs)) else None
    return OutputDifference(output, int(r.size), int(differ.sum()), max_abs, step, steps)


def compare_all(actual: Sequence[Any], reference: Sequence[Any],
                steps: Sequence[float | None] = ()) -> list[OutputDifference]:
    """Output by output; a missing step means a float output (compared in real units only)."""
    out = []
    for i, (a, r) in enumerate(zip(actual, reference)):
        out.append(compare(a, r, steps[i] if i < len(steps) else None, i))
    return out


def summary(diffs: Sequence[OutputDifference]) -> str:
    """One phrase for all outputs: "bit for bit" when every output is, else the differing ones."""
    if not diffs:
        return "nothing compared"
    if all(d.identical for d in diffs):
        return "bit for bit"
    if len(diffs) == 1:
        return diffs[0].text()
    return "; ".join(f"output {d.output}: {d.text()}" for d in diffs if not d.identical)
