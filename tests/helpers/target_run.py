"""The opt-in real target run shared by tests: skip unless CMLENS_TEST_ET_ROOT names a checkout (CI has
none), else submit the Job `cmlens run` submits for `source` with these lowering options, once on QEMU
Cortex-M55, and return its run (a ModelRunResult)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


def run_on_m55_or_skip(source: str, workdir: Path, **lowering: Any) -> Any:
    root = os.environ.get("CMLENS_TEST_ET_ROOT")
    if not root or not Path(root).is_dir():
        pytest.skip("opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job

    job = Job(source, LowerRequest(target="cortex-m55", calib=2, **lowering), steps=("run",),
              run=RunOptions(target="cortex-m55", et_root=root, cmsis_nn=os.environ.get("CMLENS_TEST_CMSIS_NN")),
              out_dir=str(workdir))
    res = execute_job(job)
    res.raise_error()
    return res.run


def run_on_or_skip(source: str, workdir: Path, target: str, **lowering: Any) -> Any:
    """run_on_m55_or_skip on another CPU's QEMU board (cortex-m4: mps2-an386, m7: an500, m33: an505)."""
    root = os.environ.get("CMLENS_TEST_ET_ROOT")
    if not root or not Path(root).is_dir():
        pytest.skip("opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job

    job = Job(source, LowerRequest(target=target, calib=2, **lowering), steps=("run",),
              run=RunOptions(target=target, et_root=root, cmsis_nn=os.environ.get("CMLENS_TEST_CMSIS_NN")),
              out_dir=str(workdir))
    res = execute_job(job)
    res.raise_error()
    return res.run
