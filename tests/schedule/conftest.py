"""Live lowerings shared by the schedule tests (a schedule rewrites the live final program)."""
from __future__ import annotations

from pathlib import Path

import pytest

PATCH_NET = str(Path(__file__).parent / "models" / "patch_net.py")


def _lowered(source: str):
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.lowering.lower import LowerOutputs
    from backend_core.stages.pipeline import PipelineOptions

    low = lower_source(source, PipelineOptions(target="cortex-m55"), use_cache=False,
                       outputs=LowerOutputs(edge_program=True, pte=True))
    assert low.status == "done"
    return low


@pytest.fixture(scope="session")
def patch_net():
    return _lowered(PATCH_NET)


@pytest.fixture(scope="session")
def ds_cnn():
    return _lowered("ds_cnn")
