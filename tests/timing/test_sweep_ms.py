"""A sweep's run cells with a cycle estimate: the job result's summary and the dashboard row carry the
estimated ms (a `≈ ms` column), read from a recorded real run's profile (the `profile` section of
`cmlens run tests/fixtures/models/kws_pr/after/kws.py --board stm32l4r5 --profile` on QEMU M4); a result
without a run, or a profile without an estimate, shows none."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from backend_core.orchestration.jobs import Job, JobResult, LowerRequest
from backend_core.orchestration.sweep.dashboard import COLUMNS, dashboard_html, rows_of

RUN = Path(__file__).parent / "fixtures" / "run_profile_kws_after_stm32l4r5.json"


def test_summary_and_dashboard_show_the_estimated_ms() -> None:
    prof = json.loads(RUN.read_text())["profile"]
    job = Job("kws.py", LowerRequest(target="cortex-m4"), steps=("run",), label="kws · m4")
    res = JobResult(job, "done", {"run": {"outcome": "PASS", "profile": prof}})
    bare = copy.deepcopy(prof)
    bare["estimate"] = None
    other = JobResult(job, "done", {"run": {"outcome": "PASS", "profile": bare}})
    assert res.summary()["estimated_ms"] == prof["estimate"]["ms"] and other.summary()["estimated_ms"] is None
    rows = rows_of([("a", job), ("b", job), ("c", job)], {"a": res.to_dict(), "b": other.to_dict()})
    assert [r["estimated_ms"] for r in rows] == [prof["estimate"]["ms"], None, None]
    assert ("estimated_ms", "≈ ms") in COLUMNS
    page = dashboard_html(rows, {"jobs": []})
    assert '<option value="estimated_ms">≈ ms</option>' in page
