"""Opt-in, real (issue 46, item 6): the zoo's sequence models on QEMU M55. Plain ExecuTorch's program cannot
run (its float aten::linear.out has no portable kernel); `--keep-going` writes those linears as addmm and the
program PASSes bit for bit against the lowered program on the host; `--rewrite rnn-cells` puts the gates on
CMSIS-NN kernels and PASSes too, with fewer fallbacks and fewer instructions. Needs CMLENS_TEST_ET_ROOT (and
CMLENS_TEST_CMSIS_NN) with the checkout's M55 libraries in the cmlens cache; minutes per model."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = os.environ.get("CMLENS_TEST_ET_ROOT")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not ROOT, reason="opt-in: set CMLENS_TEST_ET_ROOT (and CMLENS_TEST_CMSIS_NN)")]


def _profile(model: str, folder: Path, **lower):
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job

    res = execute_job(Job(model, LowerRequest(target="cortex-m55", **lower), steps=("profile",),
                      run=RunOptions(target="cortex-m55", profile=True, et_root=ROOT, timeout=600,
                                     cmsis_nn=os.environ.get("CMLENS_TEST_CMSIS_NN")), out_dir=str(folder)))
    res.raise_error()
    return res


@pytest.mark.parametrize("model", ["lstm_kws", "cnn_gru_har"])
def test_plain_is_refused_and_keep_going_passes_bit_for_bit(model: str, tmp_path: Path) -> None:
    from backend_core.target.judge.run_result import MissingOpsError

    with pytest.raises(MissingOpsError, match=r"aten::linear\.out"):
        _profile(model, tmp_path / "plain", keep_going=False)
    kept = _profile(model, tmp_path / "kept", keep_going=True)
    assert kept.run.outcome == "PASS" and kept.run.passed            # atol 0: bit for bit
    assert "linear_as_addmm" in kept.lowering.verdicts["rewrites"]
    assert kept.run.profile.total > 0


@pytest.mark.parametrize("model", ["lstm_kws", "cnn_gru_har"])
def test_rnn_cells_pass_with_fewer_fallbacks_and_instructions(model: str, tmp_path: Path) -> None:
    kept = _profile(model, tmp_path / "kept", keep_going=True)
    cells = _profile(model, tmp_path / "cells", keep_going=True, rewrites=("rnn-cells",))
    assert cells.run.outcome == "PASS" and cells.run.passed
    assert cells.lowering.verdicts["rnn_cells"] and set(cells.lowering.verdicts["rnn_cells"].values()) == {"rewritten"}
    assert len(cells.lowering.fallbacks()) < len(kept.lowering.fallbacks()) / 4
    assert cells.run.profile.total < kept.run.profile.total
    print(f"\n{model} on QEMU M55: keep-going {len(kept.lowering.fallbacks())} fallback(s), "
          f"{kept.run.profile.total:,} instructions; rnn-cells {len(cells.lowering.fallbacks())} fallback(s), "
          f"{cells.run.profile.total:,} instructions ({cells.run.profile.total / kept.run.profile.total:.2f}x)")
