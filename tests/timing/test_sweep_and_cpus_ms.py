"""The estimated ms beside instructions in a sweep and across CPUs: the job result's summary, the sweep
dashboard row (a `≈ ms` column) and `cmlens profile`'s table, read from a recorded real run's profile (the
`profile` section of `cmlens run tests/fixtures/models/kws_pr/after/kws.py --board stm32l4r5 --profile` on
QEMU M4); a result without a run, or a profile without an estimate, shows none."""
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


def test_cmlens_profile_table_has_each_cores_estimated_ms() -> None:
    """`cmlens profile --cpus m4,m55`'s table: a '≈ ms' row and the board, clock and error of each estimate
    (the M4 profile is the recorded real run; the M55 side is the same profile without an estimate)."""
    from backend_core.target.profile import compare_cpus
    from backend_core.target.profile.model import Profile

    m4 = Profile.from_dict(json.loads(RUN.read_text())["profile"])
    other = Profile.from_dict(json.loads(RUN.read_text())["profile"])
    other.target, other.estimate = "cortex-m55", None
    cmp = compare_cpus([m4, other])
    text = cmp.table()
    ms = f"{m4.estimate['ms']:.3g}"
    row = next(x for x in text.splitlines() if x.lstrip().startswith("≈ ms, kernels (cycle estimate)"))
    assert row.split()[-2:] == [ms, "-"]
    assert f"estimated on: m4 stm32l4r5 @ 120 MHz (±{m4.estimate['error_pct']:.0f} % on published measurements)" in text
    assert cmp.to_dict()["estimated_ms"] == {"cortex-m4": m4.estimate["ms"]}
