"""A real model that lowers: the same fallbacks as plain ExecuTorch gives (issue 26)."""
from __future__ import annotations

from collections import Counter

from .conftest import CALIB, bench_module, source

NAME = "lcnet_050"


def test_lowers_with_the_fallbacks_plain_executorch_has() -> None:
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.stages.pipeline.stages import PipelineOptions

    bench = bench_module()
    plain = bench.plain(NAME, calib=CALIB)
    assert plain["ok"], plain
    res = lower_source(source(NAME), PipelineOptions(calib=CALIB), use_cache=False)
    assert res.status == "done", res.error
    assert Counter(n.target for n in res.fallbacks()) == plain["ops"]
    assert not res.verdicts["quarantined"]
    assert all(n.fallback.category != "unknown" for n in res.fallbacks())
