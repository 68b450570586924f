"""bench/target_run.py without an ExecuTorch checkout (as in CI): a clear skip message, exit 0."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "target_run.py"


def test_bench_skips_without_checkout() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, str(BENCH)], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "skipped: no ExecuTorch checkout (pass --et-root)"
