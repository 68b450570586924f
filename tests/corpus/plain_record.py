"""Plain ExecuTorch's results on its own Cortex-M cases, recorded once per stack (status, failing stage,
the non-cortex_m ops it leaves), so the corpus test lowers each case once (with the project) instead of
twice. What is recorded is the op set and the status, not bytes: neither depends on float rounding. The
record names the torch/torchao/ExecuTorch versions it came from; on any other stack it is ignored and
plain ExecuTorch runs live. `test_et_corpus.py` also re-runs a spread sample live against the record.

Record again after a stack change: python -m tests.corpus.plain_record   (about 2 minutes on 2 cores)"""
from __future__ import annotations

import json
import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from .plain import PlainResult, plain_lower

RECORD = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "plain_executorch.json"


def _stack() -> dict[str, str]:
    from backend_core.common.versions import stack_versions

    return {k: v for k, v in stack_versions().items() if k in ("torch", "torchao", "executorch")}


def recorded() -> dict[str, PlainResult] | None:
    """{case: plain result} from the record; None when there is none or it is from another stack."""
    if not RECORD.exists():
        return None
    data = json.loads(RECORD.read_text())
    if data.get("versions") != _stack():
        return None
    return {name: PlainResult(**r) for name, r in data["cases"].items()}


def plain_case(name: str) -> PlainResult:
    from . import et_cases

    model, inputs = et_cases.case(name)
    return plain_lower(model, inputs)


def _job(name: str) -> tuple[str, PlainResult]:
    import logging

    logging.getLogger().setLevel(logging.ERROR)
    return name, plain_case(name)


def record(workers: int = 2) -> Path:
    from . import et_cases

    names = et_cases.case_names()
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as ex:
        results = dict(ex.map(_job, names, chunksize=4))
    cases = {n: {**r.__dict__, "seconds": 0.0} for n, r in results.items()}
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps({"versions": _stack(), "cases": cases}, indent=1, sort_keys=True) + "\n")
    return RECORD


if __name__ == "__main__":
    path = record(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
    print(f"wrote {path}")
