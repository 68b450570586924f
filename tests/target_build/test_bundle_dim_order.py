"""Bundled tensors keep the method's dim order (issue 9, item 1). A real lowering of a conv -> GELU ->
upsample model with a channels-last input, a real .bpte, read back with ExecuTorch's own deserialisers:
the expected output must carry the program output's dim order (channels-last) and its bytes in that
order, or the runner's bundle check aborts on mismatched strides (seen on QEMU M55)."""
from __future__ import annotations

from pathlib import Path

import pytest

MODEL = Path(__file__).resolve().parents[1] / "fixtures" / "target" / "gelu_upsample_cl.py"
CHANNELS_LAST = (0, 2, 3, 1)


@pytest.fixture(scope="module")
def bundle():
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program
    from executorch.exir._serialize._program import deserialize_pte_binary

    from backend_core.lowering.lower import LowerOutputs, lower

    res = lower(str(MODEL), use_cache=False, outputs=LowerOutputs(bpte=True, edge_program=True))
    assert res.status == "done", res.error
    bp = deserialize_from_flatbuffer_to_bundled_program(res.blobs["model.bpte"])
    program = deserialize_pte_binary(bytes(bp.program)).program
    return res, bp, program


def _io_orders(program):
    from backend_core.stages.pipeline.program_files import program_io_dim_orders

    return program_io_dim_orders(program)


def test_expected_output_carries_the_programs_channels_last_dim_order(bundle):
    _res, bp, program = bundle
    _ins, outs = _io_orders(program)
    assert outs == [CHANNELS_LAST]           # the method's output is channels-last on the target
    case = bp.method_test_suites[0].test_cases[0]
    assert tuple(case.expected_outputs[0].val.dim_order) == CHANNELS_LAST
    assert tuple(case.inputs[0].val.dim_order) == tuple(_ins[0])


def test_expected_output_bytes_are_the_reference_output_in_that_order(bundle):
    import torch

    from backend_core.stages.pipeline.program_files import expected_outputs_from_lowered

    res, bp, _program = bundle
    pipe = res.pipeline
    [ref] = expected_outputs_from_lowered(pipe.final_program, pipe.example_inputs)   # the lowered program
    val = bp.method_test_suites[0].test_cases[0].expected_outputs[0].val
    assert list(val.sizes) == list(ref.shape)
    nhwc = ref.permute(0, 2, 3, 1).contiguous()
    got = torch.frombuffer(bytearray(bytes(val.data)), dtype=torch.float32).reshape(nhwc.shape)
    assert torch.equal(got, nhwc)
    assert not torch.equal(got.flatten(), ref.contiguous().flatten())   # the two orders differ: not vacuous
