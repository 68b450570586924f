"""Shared by tests/profile (no __init__.py or conftest: a package named "profile" would shadow the
standard library's profile module, which cProfile imports). Real lowerings (once per session, private cache) and the recorded
UART of real runs."""
from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TARGET_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "target"
_FINALS: dict = {}


@pytest.fixture(scope="session")
def final_of():
    """final_of(source, target="cortex-m55") -> the final GraphSnapshot of a real lowering."""
    pytest.importorskip("executorch")
    from backend_core.lowering.lower import lower
    from backend_core.stages.pipeline import PipelineOptions

    def get(source: str, target: str = "cortex-m55"):
        key = (source, target)
        if key not in _FINALS:
            res = lower(source, PipelineOptions(target=target))
            assert res.status == "done", res.error
            _FINALS[key] = res.final
        return _FINALS[key]

    return get
