"""Lower ExecuTorch's Cortex-M test cases with the project and with plain ExecuTorch, side by
side, in worker processes (2 by default: each case is ~0.75 s per flow on one core, so the
277 cases take ~3.5 min instead of ~7). Used by tests/corpus/test_et_corpus.py and
bench/reasons_corpus.py. Every result is plain data (picklable)."""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable


@dataclass
class CaseResult:
    name: str
    status: str                                   # the project's: done | failed | error
    plain_status: str
    ops: dict[str, str] = field(default_factory=dict)          # non-cortex_m call_function nodes
    plain_ops: dict[str, str] = field(default_factory=dict)
    fallbacks: list[dict] = field(default_factory=list)        # id, target, category, message, user_op
    seconds: float = 0.0
    plain_seconds: float = 0.0
    error: str = ""
    plain_error: str = ""

    @property
    def matches(self) -> bool:
        return self.status == self.plain_status and (self.status != "done" or self.ops == self.plain_ops)


def _project(name: str) -> tuple[str, dict[str, str], list[dict], float, str]:
    from backend_core.lowering.lower import lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    from . import et_cases

    t0 = time.perf_counter()
    try:
        # calib=0: calibrate on the example inputs only, as ExecuTorch's tester and plain_lower do.
        r = lower(et_cases.source(name), PipelineOptions(calib=0), use_cache=False)
    except Exception as e:  # noqa: BLE001 - recorded, the test reports it
        return "error", {}, [], time.perf_counter() - t0, f"{type(e).__name__}: {e}"
    seconds = time.perf_counter() - t0
    ops: dict[str, str] = {}
    fbs: list[dict] = []
    if r.final is not None:
        ops = {n.id: n.target for n in r.final.nodes
               if n.fx_op == "call_function" and not n.target.startswith("cortex_m.")}
        for n in r.fallbacks():
            fb = n.fallback
            fbs.append({"id": n.id, "target": n.target, "category": fb.category if fb else None,
                        "message": fb.message if fb else "", "group": fb.group if fb else "",
                        "user_op": (fb.user_op.target if fb and fb.user_op else None)})
    return r.status, ops, fbs, seconds, (r.error or {}).get("message", "") if r.error else ""


def compare_case(name: str, plain_first: bool = True, recorded: Any = None) -> CaseResult:
    """`recorded`: plain ExecuTorch's result from tests/corpus/plain_record.py (not run again)."""
    from .plain_record import plain_case

    def plain():
        return recorded if recorded is not None else plain_case(name)

    if plain_first:       # alternate the order so machine noise hits both sides
        p = plain()
        status, ops, fbs, secs, err = _project(name)
    else:
        status, ops, fbs, secs, err = _project(name)
        p = plain()
    return CaseResult(name, status, p.status, ops, p.non_cortex_m, fbs, secs, p.seconds, err, p.error)


def _job(args: tuple[str, bool, Any]) -> CaseResult:
    return compare_case(*args)


def _init() -> None:
    import logging

    logging.getLogger("torch").setLevel(logging.ERROR)
    logging.getLogger("executorch").setLevel(logging.ERROR)   # plain flow noise; capture_logs still records
    logging.getLogger().setLevel(logging.ERROR)
    from . import et_cases

    et_cases.case_names()          # import ExecuTorch and the test modules once per worker


def run_corpus(names: Iterable[str], workers: int | None = None,
               on_result: Callable[[CaseResult], None] | None = None,
               recorded: dict[str, Any] | None = None) -> list[CaseResult]:
    """Every case's result, in order; `on_result` sees each one as it arrives. `recorded` ({case: plain
    result}, tests/corpus/plain_record.py) stands in for the plain ExecuTorch runs of the cases it holds."""
    names = list(names)
    # under pytest-xdist the suite's other worker already uses the second core
    default = "1" if os.environ.get("PYTEST_XDIST_WORKER") else "2"
    workers = workers or int(os.environ.get("CMLENS_TEST_CORPUS_WORKERS", default))
    jobs = [(n, i % 2 == 0, (recorded or {}).get(n)) for i, n in enumerate(names)]
    out: list[CaseResult] = []
    if workers <= 1:
        _init()
        results: Iterable[CaseResult] = map(_job, jobs)
        for r in results:
            out.append(r)
            if on_result:
                on_result(r)
        return out
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_init) as ex:
        for r in ex.map(_job, jobs, chunksize=2):
            out.append(r)
            if on_result:
                on_result(r)
    return out
