"""The README's bench table is the benches' own output (issue 45): bench/results.py records a run in the
bench history store and exports each bench's newest record to bench/results.jsonl; scripts/bench_table.py
writes the table from that file. A hand edit of the table, or a result never exported, fails here."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench_table = _module(ROOT / "scripts" / "bench_table.py")


def test_readme_table_is_the_results_file_rendered() -> None:
    body = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = body.index(bench_table.BEGIN), body.index(bench_table.END) + len(bench_table.END)
    assert body[start:end] == bench_table.table(bench_table.read_results()), \
        "README's bench table differs from bench/results.jsonl: run python scripts/bench_table.py --write"


def test_a_published_run_replaces_its_bench_row_and_keeps_the_others(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        results = _module(ROOT / "bench" / "results.py")
    finally:
        sys.path.remove(str(ROOT / "bench"))
    store, out = str(tmp_path / "bench.db"), tmp_path / "results.jsonl"
    results.publish("cache", what="second lowering", result="0.30 s", goal="≤ 1 s", figures={"second_s": 0.3},
                    store=store, out=out)
    results.publish("numerics", what="8 inputs", result="2.5×", goal="≤ 3×", figures={"ratio": 2.5},
                    store=store, out=out)
    results.publish("cache", what="second lowering", result="0.12 s", goal="≤ 1 s", figures={"second_s": 0.12},
                    store=store, out=out)
    rows = bench_table.read_results(out)
    assert [r["name"] for r in rows] == ["cache", "numerics"]
    cache = rows[0]
    assert cache["extra"]["result"] == "0.12 s" and cache["metrics"] == {"second_s": 0.12}
    assert cache["source"] == "bench" and len(cache["commit"]) == 40
    rendered = bench_table.table(rows)
    assert "| `cache.py` | second lowering | 0.12 s | ≤ 1 s |" in rendered and "0.30 s" not in rendered


def test_a_line_that_is_not_a_bench_record_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "results.jsonl"
    bad.write_text(json.dumps({"config": "bench", "name": "x", "extra": {"what": "w"}}) + "\n")
    with pytest.raises(ValueError, match=r"results.jsonl:1 is not a bench record"):
        bench_table.read_results(bad)


def test_a_fresh_store_keeps_the_committed_rows_of_other_benches(tmp_path: Path) -> None:
    """A clone's first bench run has a store with one bench in it: the other benches' committed rows stay."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        results = _module(ROOT / "bench" / "results.py")
    finally:
        sys.path.remove(str(ROOT / "bench"))
    out = tmp_path / "results.jsonl"
    results.publish("numerics", what="8 inputs", result="2.5×", goal="≤ 3×", figures={"ratio": 2.5},
                    store=str(tmp_path / "machine_a.db"), out=out)
    results.publish("cache", what="second lowering", result="0.12 s", goal="≤ 1 s", figures={"second_s": 0.12},
                    store=str(tmp_path / "machine_b.db"), out=out)
    rows = {r["name"]: r for r in bench_table.read_results(out)}
    assert set(rows) == {"cache", "numerics"} and rows["numerics"]["extra"]["result"] == "2.5×"
