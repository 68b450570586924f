"""Serialise the lowered program: `.pte`, and a bundled `.bpte` whose reference outputs come from
the PT2E-quantized model (so a target run checks the lowering, not the quantization)."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ..errors import StageFailedError


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
    except Exception as e:  # noqa: BLE001
        raise StageFailedError("to_executorch", f"Serialising the .pte failed: {type(e).__name__}: {e}",
                               "The final graph could not be planned/serialised by ExecuTorch.") from e


def bundle_layout(tensors: Any) -> list[Any]:
    """Tensors as the bundled program must carry them for the target to read them right.

    The bundle stores a tensor's contiguous (NCHW) bytes with dim order 0,1,2,3, and the runtime
    copies those bytes straight into the method's input; a legacy-flow program expects its 4-D
    inputs channels-last, so a 3-channel image arrived scrambled (found by per-layer gaps on
    QEMU: resnet8 "PASSed" on a garbage input). Channels-last tensors are therefore stored as
    their NHWC bytes under the logical NCHW shape. 1-channel tensors need no change."""
    import torch

    out = []
    for t in tensors:
        if (isinstance(t, torch.Tensor) and t.dim() == 4 and not t.is_contiguous()
                and t.is_contiguous(memory_format=torch.channels_last)):
            t = t.permute(0, 2, 3, 1).contiguous().reshape(t.shape)
        out.append(t)
    return out


def bpte_bytes(final_program: Any, reference_module: Any, inputs: tuple) -> bytes:
    import torch
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer,
    )

    try:
        with torch.no_grad():
            expected = reference_module(*inputs)
        if isinstance(expected, torch.Tensor):
            expected = (expected,)
        et = _executorch_manager(final_program)
        suite = MethodTestSuite(method_name="forward", test_cases=[
            MethodTestCase(inputs=bundle_layout(inputs), expected_outputs=bundle_layout(expected))])
        return bytes(serialize_from_bundled_program_to_flatbuffer(BundledProgram(et, [suite])))
    except Exception as e:  # noqa: BLE001
        raise StageFailedError("bundled program", f"Building the .bpte failed: {type(e).__name__}: {e}",
                               "The reference outputs come from the quantized model on the example inputs.") from e


def write_bytes(path: str, data: bytes) -> str:
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return str(p)
