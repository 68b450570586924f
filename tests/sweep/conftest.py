"""Sweep tests run real jobs (real ExecuTorch lowerings) in real worker processes: a spawn process pool,
a distributed.LocalCluster, and a `dask scheduler` + `dask worker` started on 127.0.0.1."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

MODELS = Path(__file__).parent / "models"


@pytest.fixture
def models(tmp_path: Path) -> Path:
    """Fresh copies of the model files (the dying models keep a marker file beside themselves)."""
    d = tmp_path / "models"
    shutil.copytree(MODELS, d)
    return d


def rows(results: dict) -> dict[str, tuple]:
    """What a user compares between two sweeps: per job label, the status and the numbers."""
    out = {}
    for r in results.values():
        s = r["summary"]
        out[r["job"]["label"]] = (r["status"], s["fallbacks"], s["arena_bytes"], s["pte_bytes"],
                                  s["method_allocator_bytes"])
    return out
