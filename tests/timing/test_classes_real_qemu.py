"""Opt-in, real: ds_cnn on QEMU (M55 and M4) with --profile; the instructions counted by class from QEMU's
block log must sum, op by op, to the op's -icount count from the ETDump, and the log must not change the
counts (a profile without it gives the same numbers). Needs CMLENS_TEST_ET_ROOT and cached libraries."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


def _profile(cpu: str, out: Path, classes: bool):  # the Job `cmlens run --profile` submits
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job

    res = execute_job(Job("ds_cnn", LowerRequest(target=cpu), steps=("run",),
                          run=RunOptions(target=cpu, profile=True, classes=classes,
                                         et_root=os.environ["CMLENS_TEST_ET_ROOT"],
                                         cmsis_nn=os.environ.get("CMLENS_TEST_CMSIS_NN")),
                          out_dir=str(out)))
    res.raise_error()
    return res.run


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_classes_sum_to_each_ops_icount(cpu: str, tmp_path: Path) -> None:
    root = os.environ.get("CMLENS_TEST_ET_ROOT")
    if not root or not Path(root).is_dir():
        pytest.skip("opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")
    pytest.importorskip("executorch")
    run = _profile(cpu, tmp_path / "with", True)
    p = run.profile
    assert run.outcome == "PASS" and p is not None and "-d" in run.sim.command
    assert all(o.classes is not None for o in p.ops), p.notes
    assert [sum(o.classes.values()) for o in p.ops] == [o.count for o in p.ops]
    assert not any("instruction classes" in n for n in p.notes), p.notes
    conv = [o for o in p.ops if o.op.endswith("quantized_conv2d.default")]
    if cpu == "cortex-m55":       # CMSIS-NN's Helium kernels: vector loads and MACs
        assert all(o.classes["mve"] > 0 and o.classes["mve_load"] > 0 for o in conv)
    else:                         # the DSP kernels: SMLAD and friends, no MVE at all
        assert all(o.classes["mac_simd"] > 0 and o.classes["mve"] == 0 for o in conv)
    assert not (tmp_path / "with" / "qemu-exec.log").exists() and "qemu-exec.log" not in run.files
    plain = _profile(cpu, tmp_path / "plain", False).profile
    assert [o.count for o in plain.ops] == [o.count for o in p.ops] and all(o.classes is None for o in plain.ops)
