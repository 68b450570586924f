"""A portable pad, permute or repeat is a fallback with its reason and its cost, as plain ExecuTorch's op
list counts it (issue 46 item 7): before, they were "data movement" and never explained, although pad and
permute have CMSIS-NN kernels in the backend's own table (cortex_m::pad = arm_pad, cortex_m::transpose)."""
from __future__ import annotations

from pathlib import Path

from backend_core.common.snapshot.classify import classify
from backend_core.common.snapshot.model import KIND_DATA, KIND_FALLBACK

MODEL = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "float_moves.py")


def test_pad_permute_and_repeat_on_portable_kernels_are_fallbacks_in_the_final_graph() -> None:
    for target in ("aten.constant_pad_nd.default", "aten.permute_copy.default", "aten.repeat.default"):
        assert classify("call_function", target, final=True) == KIND_FALLBACK, target
    assert classify("call_function", "aten.view_copy.default", final=True) == KIND_DATA      # free: stays data


def test_a_float_permute_names_the_kernel_it_missed_and_its_cost() -> None:
    from backend_core.lowering.lower import lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    res = lower(MODEL, PipelineOptions(calib=2), use_cache=False)
    by_target = {n.target: n.fallback for n in res.fallbacks()}
    permute, repeat = by_target["aten.permute_copy.default"], by_target["aten.repeat.default"]
    assert "cortex_m::transpose (CMSIS-NN arm_transpose)" in permute.message
    assert "Cost: it writes 1,152 B ([1, 6, 6, 8])" in permute.message       # 288 float32 values
    assert "once per repetition" in repeat.message and "Cost: it writes" in repeat.message
    assert "unknown" not in {f.category for f in by_target.values()}
