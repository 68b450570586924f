"""The bundle's expected outputs are the lowered program run on the host, bit for bit; the fake-quant
model's distance is recorded beside them in output steps with the layer that introduces it; and a
planted fault is one weight byte whose flip the host has seen change the outputs.

gelu_conv (examples/gelu_conv.py: conv -> GELU -> nearest upsample, channels-last, 1x8x16x16 output)
is the model that read FAIL on a correct M55 target while its expected outputs were fake-quant's."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gelu_conv.py"


@pytest.fixture(scope="module")
def gelu_conv():
    pytest.importorskip("executorch")
    from backend_core.lowering.lower import LowerOutputs, lower

    res = lower(str(EXAMPLE), use_cache=False, outputs=LowerOutputs(bpte=True, edge_program=True))
    assert res.status == "done", res.error
    return res


def test_expected_outputs_are_the_lowered_program_bit_for_bit(gelu_conv) -> None:
    from backend_core.stages.pipeline.program_files import bytes_in_dim_order, expected_outputs_from_lowered
    from backend_core.stages.pipeline.reference_check import expected_outputs

    pipe = gelu_conv.pipeline
    [stored] = expected_outputs(gelu_conv.blobs["model.bpte"])            # bytes as the target reads them
    [lowered] = expected_outputs_from_lowered(pipe.final_program, pipe.example_inputs)
    assert stored.tobytes() == bytes_in_dim_order(lowered, (0, 2, 3, 1))   # channels-last output
    fq = pipe.quantized_module(*pipe.example_inputs)
    assert stored.tobytes() != bytes_in_dim_order(fq, (0, 2, 3, 1))        # the old reference is another program


def test_the_fake_quant_distance_is_recorded_in_steps_and_named(gelu_conv) -> None:
    from backend_core.target.judge.references import LOWERED, References

    refs = References.from_json(gelu_conv.blobs["references.json"])
    assert refs.expected_from == LOWERED and refs.exact_reference
    [d] = refs.vs_fake_quant
    assert d.values == 2048 and 0 < d.differing <= 16 and d.step == pytest.approx(refs.steps[0])
    assert d.max_steps is not None and 1 <= round(d.max_steps) <= 2 and abs(d.max_steps - round(d.max_steps)) < 1e-3
    assert refs.causes and refs.causes[0].startswith("conv (quantized_conv2d): local max 1 step")
    assert refs.fake_quant_text().startswith(f"lowered vs fake-quant: max {round(d.max_steps)} step")


def test_a_planted_fault_is_one_weight_byte_the_host_sees(gelu_conv) -> None:
    from backend_core.target.judge.fault import _pte_constants, plant_weight_fault

    pipe = gelu_conv.pipeline
    bpte = gelu_conv.blobs["model.bpte"]
    fault = plant_weight_fault(bpte, pipe.final_program, pipe.example_inputs)
    a, b = np.frombuffer(bpte, np.uint8), np.frombuffer(fault.bpte, np.uint8)
    assert a.size == b.size and list(np.nonzero(a != b)[0]) == [fault.file_offset]
    assert b[fault.file_offset] == a[fault.file_offset] ^ 0xFF and fault.after == ~fault.before
    pte = gelu_conv.blobs["model.pte"]
    start = bpte.find(pte)
    assert start >= 0                                                     # the same program as the .pte
    weights = [(c.offset, c.offset + c.numel) for c in _pte_constants(pte)]
    assert any(lo <= fault.file_offset - start < hi for lo, hi in weights)
    assert any(not d.identical for d in fault.host_change)
    assert "on the host this changes the outputs" in fault.describe()
