"""ExecuTorch's own Cortex-M test cases (277 McuTestCases installed with the wheel) lowered by
the project and by plain ExecuTorch on the same model and inputs, as given: the same status, the
same non-cortex_m ops, no `unknown` reason, and every reason names the op at quantization time.

Plain ExecuTorch's side comes from its record for this stack (tests/corpus/plain_record.py), so each
case is lowered once; a spread sample runs plain ExecuTorch live against the record.

The suite lowers a covering sample (about 40 cases, ~1.5 min of one core): the first case of every
outcome plain ExecuTorch has (status, failing stage, kinds of non-cortex_m op left) and of every test
module. CMLENS_TEST_CORPUS_ALL=1 lowers all 277 (~9 min under the suite); bench/reasons_corpus.py does too."""
from __future__ import annotations

import collections
import os

import pytest

from . import et_cases
from .compare import CaseResult, run_corpus
from .plain import PlainResult
from .plain_record import plain_case, recorded

pytestmark = pytest.mark.slow


def covering_sample(names: list[str], rec: dict[str, PlainResult]) -> list[str]:
    """The first case (by name) of each outcome plain ExecuTorch records and of each test module. An
    outcome is the status, the failing stage and the kinds of op left outside cortex_m (node names
    without their _N suffix), so every way ExecuTorch treats a case is lowered at least once."""
    seen_outcomes: set[tuple] = set()
    seen_modules: set[str] = set()
    chosen = []
    for name in sorted(names):
        r = rec[name]
        outcome = (r.status, r.stage, tuple(sorted({op.rstrip("_0123456789") for op in r.non_cortex_m})))
        module = name.split(et_cases.SEP)[0]
        if outcome not in seen_outcomes or module not in seen_modules:
            chosen.append(name)
        seen_outcomes.add(outcome)
        seen_modules.add(module)
    return chosen


def _names() -> list[str]:
    """The covering sample (all cases with CMLENS_TEST_CORPUS_ALL=1 or without a record for this stack);
    CMLENS_TEST_CORPUS_FILTER=a,b keeps only the cases whose name contains one of them."""
    names = et_cases.case_names()
    rec = recorded()
    if rec is not None and not os.environ.get("CMLENS_TEST_CORPUS_ALL") and set(names) <= set(rec):
        names = covering_sample(names, rec)
    wanted = [w for w in os.environ.get("CMLENS_TEST_CORPUS_FILTER", "").split(",") if w]
    return [n for n in names if not wanted or any(w in n for w in wanted)]


@pytest.fixture(scope="module")
def corpus() -> list[CaseResult]:
    return run_corpus(_names(), recorded=recorded())      # CMLENS_CACHE is private (conftest.py)


def test_the_plain_executorch_record_holds_for_this_stack() -> None:
    """The record is for the installed torch/torchao/ExecuTorch and covers every case; a sample spread over
    the corpus, run live now, gives the recorded status and ops."""
    rec = recorded()
    assert rec is not None, "no record for this stack: python -m tests.corpus.plain_record"
    names = et_cases.case_names()
    assert set(names) <= set(rec), sorted(set(names) - set(rec))[:5]
    sample = names[::len(names) // 8][:8] + [n for n in names if rec[n].status == "failed"][:2]
    for name in sample:
        live = plain_case(name)
        assert (live.status, live.stage, live.non_cortex_m) == (rec[name].status, rec[name].stage,
                                                               rec[name].non_cortex_m), name


def test_the_corpus_is_executorchs_installed_cases_minus_named_skips() -> None:
    names = et_cases.case_names()
    assert len(names) >= 270, len(names)
    assert set(et_cases.skipped()) <= set(et_cases.KNOWN_SKIPS), et_cases.skipped()


def test_status_and_non_cortex_m_ops_equal_plain_executorch(corpus: list[CaseResult]) -> None:
    bad = [(r.name, r.status, r.plain_status, r.error[:200], r.plain_error[:200],
            sorted(set(r.ops.items()) ^ set(r.plain_ops.items()))[:6]) for r in corpus if not r.matches]
    assert not bad, f"{len(bad)} case(s) differ from plain ExecuTorch: {bad[:10]}"


def test_no_fallback_is_unknown(corpus: list[CaseResult]) -> None:
    unknown = [(r.name, f["id"], f["message"]) for r in corpus for f in r.fallbacks
               if f["category"] in (None, "unknown")]
    assert not unknown, unknown[:10]


def test_every_fallback_message_names_the_op_at_quantization_time(corpus: list[CaseResult]) -> None:
    missing = [(r.name, f["id"], f["user_op"], f["message"][:160]) for r in corpus for f in r.fallbacks
               if not f["user_op"] or f["user_op"] not in f["message"]]
    assert not missing, missing[:10]


def test_the_corpus_has_fallbacks_of_several_categories(corpus: list[CaseResult]) -> None:
    """Guards the three tests above against passing on an empty or fallback-free corpus."""
    cats = collections.Counter(f["category"] for r in corpus for f in r.fallbacks)
    assert {"layout", "not_annotated", "rejected_by_quantizer", "unsupported_module",
            "integer_arithmetic", "no_cortex_m_rewrite"} <= set(cats), cats
