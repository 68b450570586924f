"""A cancelled job's result is still a result: its JSON (what a worker sends back, what a sweep keeps) is
written, and claims no fallback count for a lowering that never finished."""
from __future__ import annotations

import threading

from backend_core.orchestration.jobs import Job, LowerRequest, execute_job


def test_a_job_cancelled_after_its_first_stage_serialises_without_a_fallback_count() -> None:
    cancel = threading.Event()

    def on_event(kind: str, data: dict) -> None:
        if kind == "stage":
            cancel.set()                        # stop after the float export

    res = execute_job(Job("ds_cnn", LowerRequest(use_cache=False)), on_event, cancel)
    d = res.to_dict()
    assert d["status"] == "cancelled" and d["exit_code"] == 130
    assert d["summary"]["fallbacks"] is None
    assert d["steps"]["lower"]["cancelled"]["stage_reached"] == "float export"
