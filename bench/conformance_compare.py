"""Compare a case's outputs on the target with its reference the way ExecuTorch's own Cortex-M tests do
(backends/test/harness/tester.py `_compare_outputs`): atol 1e-3 + qtol x the output's quantization
scale, rtol 1e-3, with the qtol the case's test module passes to `test_implementation(qtol=N)`.

The runner's BundleIO check uses one fixed atol/rtol compiled into the firmware, which is tighter than
one quantization step for most outputs; so the verdict is computed on the host from the runner's
`out-N.bin` (the output tensor's bytes, in its dim order) and the bundle's expected outputs (stored
in the same dim order)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from backend_core.analyses.preflight.program_rules import _root, _scalar, _tensor

ATOL, RTOL = 1e-3, 1e-3
_NP = {0: np.uint8, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.int64, 6: np.float32, 7: np.float64, 11: np.bool_}


@lru_cache(maxsize=None)
def module_qtol(module_file: str) -> int:
    """The qtol of `test_implementation(qtol=N)` in the test module; for modules ExecuTorch only runs as
    dialect tests on the host (models/test_nn_*), the qtol of `test_dialect(..., qtol=N)`; else 0."""
    text = Path(module_file).read_text()
    found = [int(q) for q in re.findall(r"test_implementation\([^)]*qtol=(\d+)", text)]
    if not found and "test_implementation(" not in text:
        found = [int(q) for q in re.findall(r"test_dialect\((?:[^()]|\([^()]*\))*?qtol=(\d+)", text, re.S)]
    return max(found) if found else 0


def expected_outputs(bpte: bytes) -> list[np.ndarray]:
    """The first test case's expected outputs, as flat arrays in their stored (dim-order) layout."""
    bundle = _root(bpte)
    suite = bundle.tables(1)[0]
    out = []
    for value in suite.tables(1)[0].tables(1):
        t = _tensor(value, "bundle")
        if t is None:
            continue
        dtype = _NP.get(_scalar(t, 0, "<b"), np.float32)
        out.append(np.frombuffer(t.bytes_(2), dtype=dtype))
    return out


def output_scales(bpte: bytes) -> list[float | None]:
    """The quantization scale of each method output that a dequantize op produces (else None), read
    from the program's instructions: the op writing the output value, its `scale` argument."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    program = deserialize_pte_binary(_root(bpte).bytes_(2)).program
    plan = program.execution_plan[0]
    writer: dict[int, tuple[str, list[int]]] = {}
    for chain in plan.chains:
        for ins in chain.instructions:
            a = ins.instr_args
            if hasattr(a, "op_index") and a.args:
                writer[a.args[-1]] = (plan.operators[a.op_index].name, list(a.args))
    scales: list[float | None] = []
    for idx in plan.outputs:
        name, args = writer.get(idx, ("", []))
        val = plan.values[args[1]].val if "dequantize" in name and len(args) > 1 else None
        scales.append(float(val.double_val) if hasattr(val, "double_val") else None)
    return scales


@dataclass
class Comparison:
    ok: bool
    detail: str


def compare(run_dir: Path, bpte: bytes, qtol: int) -> Comparison | None:
    """None when the runner wrote no outputs (it stopped before)."""
    expected = expected_outputs(bpte)
    files = [run_dir / f"out-{i}.bin" for i in range(len(expected))]
    if not expected or not all(f.is_file() for f in files):
        return None
    scales = output_scales(bpte)
    worst = []
    ok = True
    for i, (ref, f) in enumerate(zip(expected, files)):
        got = np.frombuffer(f.read_bytes(), dtype=ref.dtype)
        if got.size != ref.size:
            return Comparison(False, f"output {i}: {got.size} values on the target, {ref.size} expected")
        scale = scales[i] if i < len(scales) else None
        atol = ATOL + (scale or 0.0) * qtol
        g, r = got.astype(np.float64), ref.astype(np.float64)
        err = np.abs(g - r)
        bad = err > atol + RTOL * np.abs(r)
        step = f" = {err.max() / scale:.1f} quant steps" if scale else ""
        worst.append(f"output {i}: max abs error {err.max():.4g}{step} (allowed {atol:.4g}: qtol {qtol}"
                     + (f", scale {scale:.4g}" if scale else "") + f"), {int(bad.sum())}/{bad.size} outside")
        ok = ok and not bad.any()
    return Comparison(ok, "; ".join(worst))



@dataclass
class References:
    """The target's outputs against the two host references (bench/conformance_cases.save_references)."""

    exact: bool | None               # bit-identical to the lowered program on the host (None: no reference)
    lowered: str                     # how far from the lowered program
    fake_quant: str                  # how far from the fake-quant model, in output quantization steps


def _logical(flat: np.ndarray, sizes: list[int], dim_order: list[int]) -> np.ndarray:
    """A tensor's bytes in its dim order -> the array in logical (NCHW...) order."""
    mem = flat.reshape([sizes[d] for d in dim_order]) if sizes else flat.reshape(())
    return mem.transpose(np.argsort(dim_order)) if sizes else mem


def _steps(got: np.ndarray, ref: np.ndarray, scale: float | None) -> str:
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    if err.max(initial=0.0) == 0:
        return "bit-exact"
    n = int((err > 0).sum())
    if scale:
        return f"max {err.max() / scale:.1f} steps, {n}/{err.size} values differ"
    return f"max abs {err.max():.4g}, {n}/{err.size} values differ"


def against_references(run_dir: Path, bpte: bytes, refs: Path) -> References | None:
    """None when the runner wrote no outputs."""
    from backend_core.analyses.preflight.program_rules import bundle_output_layouts

    if not refs.is_file():
        return References(None, "no host reference", "no host reference")
    data = np.load(refs)
    layouts = bundle_output_layouts(bpte)
    scales = output_scales(bpte)
    exact, low, fq = True, [], []
    for i, sizes, _bundled, method in layouts:
        f = run_dir / f"out-{i}.bin"
        key = f"lowered_{i}"
        if not f.is_file() or key not in data:
            return None
        ref = data[key]
        got = _logical(np.frombuffer(f.read_bytes(), dtype=ref.dtype), sizes, method)
        scale = scales[i] if i < len(scales) else None
        d = _steps(got, ref, scale)
        exact = exact and d == "bit-exact"
        low.append(f"output {i}: {d}")
        if f"fake_quant_{i}" in data:
            fq.append(f"output {i}: {_steps(got, data[f'fake_quant_{i}'].astype(ref.dtype), scale)}")
    return References(exact, "; ".join(low), "; ".join(fq) or "no fake-quant reference")
