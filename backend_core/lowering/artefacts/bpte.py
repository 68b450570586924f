"""A bundled program (.bpte): the program it wraps and its test cases (inputs and expected
outputs per method), read by ExecuTorch's bundled-program deserialiser."""
from __future__ import annotations

import struct
import traceback
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.lowering.artefacts import values as V

MAX_SHOWN = 16


def unbundle(data: bytes, name: str) -> tuple[bytes, list[dict[str, Any]]]:
    """(program bytes, test cases as plain dicts)."""
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program

    try:
        bundle = deserialize_from_flatbuffer_to_bundled_program(data)
    except Exception as e:  # a bundle flatc cannot read is a bad file
        raise BadInputError(f"ExecuTorch could not read the bundled program {name}: {type(e).__name__}: "
                            f"{str(e)[:200]}",
                            "The file is damaged or from another ExecuTorch version: bundle it again.",
                            detail=traceback.format_exc()) from e
    cases = []
    for suite in bundle.method_test_suites:
        for i, case in enumerate(suite.test_cases):
            cases.append({"method": suite.method_name, "index": i,
                          "inputs": [_value(v) for v in case.inputs],
                          "expected_outputs": [_value(v) for v in case.expected_outputs]})
    return bytes(bundle.program), cases


def _value(v: Any) -> dict[str, Any]:
    val = v.val
    kind = type(val).__name__
    if kind != "Tensor":
        return {"kind": kind, "value": getattr(val, f"{kind.lower()}_val", None)}
    name, fmt, size = V.SCALAR_TYPES.get(V.scalar_code(val.scalar_type), ("?", "", 1))
    n = 1
    for s in val.sizes:
        n *= int(s)
    out: dict[str, Any] = {"kind": "Tensor", "dtype": name, "shape": [int(s) for s in val.sizes],
                           "dim_order": [int(d) for d in val.dim_order], "bytes": len(val.data)}
    if fmt and len(val.data) >= n * size and n:
        xs = struct.unpack_from(f"<{n}{fmt}", bytes(val.data[: n * size]))
        out.update(min=float(min(xs)), max=float(max(xs)), mean=float(sum(xs) / n),
                   first=[float(x) for x in xs[:MAX_SHOWN]])
    return out


def case_text(case: dict[str, Any]) -> str:
    """One line per tensor of a test case, for the CLI and the inspector."""
    lines = [f"{case['method']} test case {case['index']}:"]
    for role in ("inputs", "expected_outputs"):
        for i, t in enumerate(case[role]):
            if t.get("kind") != "Tensor":
                lines.append(f"  {role[:-1]} {i}: {t.get('value')!r}")
                continue
            stats = (f" min {t['min']:.4g} max {t['max']:.4g} mean {t['mean']:.4g}" if "min" in t else "")
            lines.append(f"  {role.replace('_', ' ')[:-1]} {i}: {t['dtype']}{t['shape']} dim order "
                         f"{t['dim_order']}{stats}")
    return "\n".join(lines)
