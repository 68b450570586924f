"""Opt-in (CMLENS_TEST_ET_ROOT): the scheduled program, bundled with the UNSCHEDULED program's host
outputs as its expected outputs, PASSes bit for bit on QEMU Cortex-M55 (int8 input, 2×3 patches, border
pads, slices and cats on contiguous copies)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend_core.analyses.schedule.rewrite import schedule_program
from backend_core.analyses.schedule.search import _outputs
from backend_core.orchestration.jobs.steps.schedule import scheduled_bundle
from tests.helpers.target_run import run_on_m55_or_skip

# skip before the fixture lowers anything: the default suite pays nothing for this test
pytestmark = pytest.mark.skipif(not os.environ.get("CMLENS_TEST_ET_ROOT"),
                                reason="opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")


def test_scheduled_patch_net_passes_bit_for_bit_on_qemu_m55(patch_net, tmp_path: Path) -> None:
    ep, inputs = patch_net.pipeline.final_program, tuple(patch_net.pipeline.example_inputs)
    r = schedule_program(ep, "cortex_m_quantized_conv2d_default_2", (2, 3), "cortex-m55", int8=True)
    bpte = tmp_path / "patch_net.scheduled.bpte"
    bpte.write_bytes(scheduled_bundle(r.program, "greedy", inputs, r.input_quant.to_dict(), _outputs(ep, inputs)))
    run = run_on_m55_or_skip(str(bpte), tmp_path)
    assert run.outcome == "PASS", run.summary()
    assert "bit for bit" in run.summary()


def test_own_copy_ops_pass_bit_for_bit_on_qemu_m55(patch_net, tmp_path: Path) -> None:
    """cmlens::window/tiles (kernels/ops/cmlens_ops.cpp) on the target: two stages, int8 input (contiguous,
    the windows' strided path) then channels-last windows with zero-point borders (their memcpy path)."""
    from backend_core.target.build.ops import read_program_ops

    ep, inputs = patch_net.pipeline.final_program, tuple(patch_net.pipeline.example_inputs)
    r = schedule_program(ep, "cortex_m_quantized_add_default@2x2,cortex_m_quantized_depthwise_conv2d_default_1@3x3",
                         (2, 2), "cortex-m55", int8=True)
    assert r.windows and r.tiles == 2 and not r.slices and not r.cats
    data = scheduled_bundle(r.program, "greedy", inputs, r.input_quant.to_dict(), _outputs(ep, inputs))
    assert {"cmlens::window.out", "cmlens::tiles.out"} <= set(read_program_ops(data))
    bpte = tmp_path / "patch_net.own_ops.bpte"
    bpte.write_bytes(data)
    run = run_on_m55_or_skip(str(bpte), tmp_path)
    assert run.outcome == "PASS", run.summary()
    assert "bit for bit" in run.summary()


@pytest.mark.parametrize("target", ["cortex-m7", "cortex-m4", "cortex-m33"])
def test_own_copy_ops_pass_bit_for_bit_on_another_cpu(target: str, tmp_path: Path) -> None:
    """The same two-stage schedule of patch_net lowered for an Armv7E-M / Armv8-M mainline CPU (its own
    CMSIS-NN scratch sizes), on that CPU's QEMU board: the own ops' C++ is CPU-independent C++."""
    from backend_core.lowering.lower import LowerOutputs
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.stages.pipeline import PipelineOptions
    from tests.helpers.target_run import run_on_or_skip
    from tests.schedule.conftest import PATCH_NET

    low = lower_source(PATCH_NET, PipelineOptions(target=target), use_cache=False,
                       outputs=LowerOutputs(edge_program=True, pte=True))
    ep, inputs = low.pipeline.final_program, tuple(low.pipeline.example_inputs)
    r = schedule_program(ep, "cortex_m_quantized_add_default@2x2,cortex_m_quantized_depthwise_conv2d_default_1@3x3",
                         (2, 2), target, int8=True)
    bpte = tmp_path / f"patch_net.own_ops.{target}.bpte"
    bpte.write_bytes(scheduled_bundle(r.program, "greedy", inputs, r.input_quant.to_dict(), _outputs(ep, inputs)))
    run = run_on_or_skip(str(bpte), tmp_path, target)
    assert run.outcome == "PASS", run.summary()
    assert "bit for bit" in run.summary()
