"""`cmlens evaluate --on-target K` for real: the first K samples on QEMU in one firmware (the semihosting
runner), each bit-exact with the lowered program. Opt-in: needs a built ExecuTorch checkout
(CMLENS_TEST_ET_ROOT, CMLENS_TEST_CMSIS_NN) and its Cortex-M55 libraries; CI has none."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not os.environ.get("CMLENS_TEST_ET_ROOT"),
                                reason="needs a real ExecuTorch checkout: set CMLENS_TEST_ET_ROOT (and CMLENS_TEST_CMSIS_NN)")


def test_k_samples_on_qemu_are_the_lowered_programs(tmp_path: Path) -> None:
    from backend_core.analyses.accuracy.table import summary_lines
    from backend_core.orchestration.jobs import Job, LowerRequest, RunOptions, execute_job
    from backend_core.orchestration.jobs.spec import EvaluateOptions

    job = Job("digits_cnn", LowerRequest("cortex-m55", calib=1), steps=("lower", "evaluate"), out_dir=str(tmp_path),
              run=RunOptions(et_root=os.environ["CMLENS_TEST_ET_ROOT"], cmsis_nn=os.environ.get("CMLENS_TEST_CMSIS_NN")),
              evaluate=EvaluateOptions(limit=40, on_target=4))
    res = execute_job(job)
    res.raise_error()
    ev = res.steps["evaluate"]
    t = ev["target_run"]
    assert (t["k"], t["bit_exact"], t["differ"]) == (4, 4, []) and t["simulator"] == "qemu"
    assert t["summary"].startswith("4/4 target == lowered program bit for bit on mps3-an547 (cortex-m55, qemu)")
    assert t["summary"].endswith("the host figures are the target's figures")
    lowered = ev["models"]["lowered"]["predictions"][:4]
    assert [r["target"] for r in t["samples"]] == lowered          # read from each run's own output file
    assert ev["models"]["target"]["predictions"] == lowered and ev["models"]["target"]["n"] == 4
    runs = sorted((tmp_path / "evaluate-target").glob("run*/out-0.bin"))
    assert len(runs) == 4 and len({p.read_bytes() for p in runs}) == 4       # four samples, four outputs
    text = "\n".join(summary_lines(ev))
    assert "target (4 samples)" in text and "4/4 target == lowered program bit for bit" in text
