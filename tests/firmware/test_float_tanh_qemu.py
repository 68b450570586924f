"""Opt-in, real: a model that keeps a float tanh builds against the slim libraries and PASSes on QEMU
M55 (issue 26: the runner's link said "undefined reference to tanh_out" because op_tanh.cpp defines
the kernel through a macro). Needs EXECUTORCH_ROOT (CI has no checkout and skips it)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

MODEL = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "float_tanh.py") + ":model"


@pytest.mark.slow
def test_a_float_tanh_builds_and_passes_on_qemu_m55(tmp_path: Path) -> None:
    root = os.environ.get("EXECUTORCH_ROOT")
    if not root or not Path(root).is_dir():
        pytest.skip("opt-in: set EXECUTORCH_ROOT to an ExecuTorch checkout (CI has none)")
    from backend_core.jobs import RunOptions
    from backend_core.jobs.firmware_step import run_on_target
    from backend_core.pipeline.stages import PipelineOptions

    r = run_on_target(MODEL, et_root=root, cmsis_nn=os.environ.get("CMSIS_NN_PATH"),
                      options=RunOptions(target="cortex-m55"), workdir=tmp_path,
                      lowering=PipelineOptions(target="cortex-m55", calib=2, activations="int16"))
    assert "aten::tanh.out" in r.to_dict()["ops"]["model"]       # the tanh really stayed in float
    assert r.outcome == "PASS", r.summary()
    assert "bit for bit" in r.summary()
