"""The opt-in real target run shared by tests: skip unless CMLENS_TEST_ET_ROOT names a checkout (CI has
none), else lower `source` with these options and run it once on QEMU Cortex-M55."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


def run_on_m55_or_skip(source: str, workdir: Path, **lowering: Any) -> Any:
    root = os.environ.get("CMLENS_TEST_ET_ROOT")
    if not root or not Path(root).is_dir():
        pytest.skip("opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")
    from backend_core.jobs import RunOptions
    from backend_core.jobs.firmware_step import run_on_target
    from backend_core.pipeline.stages import PipelineOptions

    return run_on_target(source, et_root=root, cmsis_nn=os.environ.get("CMLENS_TEST_CMSIS_NN"),
                         options=RunOptions(target="cortex-m55"), workdir=workdir,
                         lowering=PipelineOptions(target="cortex-m55", calib=2, **lowering))
