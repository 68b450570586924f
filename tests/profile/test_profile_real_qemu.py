"""Opt-in, real: layernorm_mlp built against an ExecuTorch checkout and run twice on QEMU M55 with
-icount. Runs only when CMLENS_TEST_ET_ROOT names a checkout whose M55 libraries are already in the cmlens
cache (a cold library build takes 5-11 min); CI has no checkout and skips it."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


def _libraries_ready(root: str) -> bool:
    from backend_core.target.toolchain.checkout import find_cmsis_nn, inspect_checkout
    from backend_core.target.build.libraries import EtLibRequest, read_stamp

    co = inspect_checkout(root)
    cmsis = find_cmsis_nn(os.environ.get("CMLENS_TEST_CMSIS_NN"), co)
    req = EtLibRequest(co.root, "cortex-m55", "Release", cmsis.path, commit=co.commit, etdump=True)
    return read_stamp(req) is not None and req.install_dir.is_dir()     # built once, by any process


@pytest.mark.slow
def test_two_real_runs_give_identical_instruction_counts(tmp_path: Path) -> None:
    root = os.environ.get("CMLENS_TEST_ET_ROOT")
    if not root or not Path(root).is_dir():
        pytest.skip("opt-in: set CMLENS_TEST_ET_ROOT to an ExecuTorch checkout (CI has none)")
    pytest.importorskip("executorch")
    if not _libraries_ready(root):
        pytest.skip("the checkout's cortex-m55 libraries are not in the cmlens cache (cmlens run builds them)")
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job

    def run_model(i: int):  # the Job `cmlens profile` submits for one CPU
        res = execute_job(Job("layernorm_mlp", LowerRequest(target="cortex-m55"), steps=("profile",),
                          run=RunOptions(target="cortex-m55", profile=True, et_root=root,
                                         cmsis_nn=os.environ.get("CMLENS_TEST_CMSIS_NN")),
                          out_dir=str(tmp_path / f"r{i}")))
        res.raise_error()
        return res.run

    runs = [run_model(i) for i in range(2)]
    for r in runs:
        assert r.outcome == "PASS" and "-icount" in r.sim.command and r.profile is not None
        p = r.profile
        assert p.unit.name == "instructions" and p.total == p.ops_total + p.overhead
        assert all(o.count > 0 for o in p.ops) and [i.name for i in p.islands][0].startswith("aten.native_layer_norm")
    a, b = (r.profile for r in runs)
    assert a.total == b.total and [o.count for o in a.ops] == [o.count for o in b.ops]
