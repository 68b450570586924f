"""Inputs that exercise the model, for `cmlens export --check`, and what a PASS on them is worth.

A bit-exact PASS on one input proves the port computes that input's outputs. When the model's outputs
do not depend on its input (random weights that collapse: ds_cnn gave identical output bytes for a
constant input, a ramp and its random example input, and an all-zero input changed one value of 12),
the PASS proves nothing about the model. So the
check firmware runs, after the bundle's reference input, a few inputs that exercise the model -- the
model's own calibration samples, else its evaluation samples, else a constant, a ramp and a reversed
ramp over the reference input's range -- and the result calls out a PASS on degenerate outputs with the
target verdict's own rule (pipeline/reference_check.degenerate_reason) plus this one: the inputs gave
outputs that differ in at most a tenth of the values (at least one allowed)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend_core.stages.pipeline.reference_check import ADVICE, degenerate_reason

MAX_SETS = 3
MAX_EXTRA_BYTES = 32 * 1024     # the extra inputs are const arrays in the check firmware's flash
_NP = {"float32": "float32", "float64": "float64", "int8": "int8", "uint8": "uint8", "int16": "int16",
       "int32": "int32", "int64": "int64", "bool": "bool"}


@dataclass(frozen=True)
class InputSet:
    name: str                    # "calibration sample 1", "ramp", ...
    data: tuple[bytes, ...]      # one buffer per method input, in the program's dtype and dim order


def _budget(io_inputs: list[dict[str, Any]]) -> int:
    per_set = max(1, sum(int(i["nbytes"]) for i in io_inputs))
    return max(1, min(MAX_SETS, MAX_EXTRA_BYTES // per_set))


def model_sets(model: Any, io_inputs: list[dict[str, Any]]) -> list[InputSet]:
    """The model's own samples (calibration, else evaluation) as the program's input buffers; [] when it
    brings none or they do not match the program's inputs."""
    from backend_core.stages.pipeline.program_files import bytes_in_dim_order

    n = _budget(io_inputs)
    samples: list[tuple[str, tuple]] = []
    for i, s in enumerate((getattr(model, "calibration_inputs", None) or [])[:n]):
        samples.append((f"calibration sample {i + 1}", tuple(s)))
    if not samples and getattr(model, "eval_data", None) is not None:
        for i, (x, _label) in enumerate(model.eval_data()):
            if i >= n:
                break
            samples.append((f"evaluation sample {i + 1}", tuple(x) if isinstance(x, (tuple, list)) else (x,)))
    out = []
    for name, tensors in samples:
        if len(tensors) != len(io_inputs):
            return []
        data = []
        for t, io in zip(tensors, io_inputs):
            if list(t.shape) != list(io["shape"]) or str(t.dtype).replace("torch.", "") != io["dtype"]:
                return []
            data.append(bytes_in_dim_order(t, tuple(io["dim_order"])))
        out.append(InputSet(name, tuple(data)))
    return out


def generated_sets(reference: list[bytes], io_inputs: list[dict[str, Any]]) -> list[InputSet]:
    """A constant, a ramp and a reversed ramp over each reference input's value range (for a model that
    brings no samples, or a ready .pte/.bpte)."""
    import numpy as np

    kinds: dict[str, list[bytes]] = {"constant": [], "ramp": [], "reversed ramp": []}
    for data, io in zip(reference, io_inputs):
        dt = np.dtype(_NP.get(io["dtype"], "uint8"))
        ref = np.frombuffer(data, dtype=dt).astype(np.float64)
        if dt.kind == "f":
            lo, hi = (float(ref.min()), float(ref.max())) if ref.size else (-1.0, 1.0)
            if hi <= lo:
                lo, hi = lo - 1.0, lo + 1.0
        else:
            info = np.iinfo(dt) if dt.kind in "iu" else None
            lo, hi = (float(info.min), float(info.max)) if info is not None else (0.0, 1.0)
        ramp = np.linspace(lo, hi, num=max(ref.size, 1))
        mid = lo + (hi - lo) / 3.0
        for kind, values in (("constant", np.full(ref.size, mid)), ("ramp", ramp), ("reversed ramp", ramp[::-1])):
            kinds[kind].append((np.round(values) if dt.kind in "iu" else values).astype(dt).tobytes())
    sets = [InputSet(k, tuple(v)) for k, v in kinds.items()]
    return sets[:_budget(io_inputs)]


def degenerate_warnings(expected: list[Any], steps: list[float | None], outputs_by_set: list[list[bytes]],
                        names: list[str]) -> list[str]:
    """What makes this PASS worth little, in words (each ends with the target verdict's advice): a
    degenerate reference output (the target verdict's rule), or every input giving the same output bytes."""
    found = []
    for i, values in enumerate(expected):
        reason = degenerate_reason(values, None, steps[i] if i < len(steps) else None)
        if reason:
            found.append(f"{'the reference output' if len(expected) == 1 else f'reference output {i}'} is "
                         f"degenerate: {reason}; {ADVICE}")
    if len(outputs_by_set) > 1:
        changed, total = _changed_values(expected, outputs_by_set)
        if changed <= max(1, total // 10):
            how = ("identical output bytes" if changed == 0 else
                   f"outputs that differ in only {changed} of {total} values")
            found.append(f"the output barely depends on the input: {len(outputs_by_set)} different inputs ("
                         + ", ".join(names) + f") gave {how} on the target; {ADVICE}")
    return found


def _changed_values(expected: list[Any], outputs_by_set: list[list[bytes]]) -> tuple[int, int]:
    """(values that differ from input set 0's in any other set, values in all outputs): element-wise in
    each output's dtype."""
    import numpy as np

    changed = total = 0
    for i, e in enumerate(expected):
        dt = np.asarray(e).dtype
        rows = [np.frombuffer(s[i], dtype=dt) for s in outputs_by_set if i < len(s) and len(s[i]) % dt.itemsize == 0]
        if not rows or any(r.size != rows[0].size for r in rows):
            continue
        total += rows[0].size
        changed += int(np.any(np.stack(rows[1:]) != rows[0], axis=0).sum()) if len(rows) > 1 else 0
    return changed, total
