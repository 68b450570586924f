"""The stock runner's own memory lines (recorded UART of real QEMU runs, tests/fixtures/uart) beside
the prediction for the same models: planned sizes exact, method allocator an upper bound within 10 %."""
from __future__ import annotations

import pytest

from backend_core.target.memory import analyze_memory
from backend_core.target.memory.runner_figures import compare, explain_failure, parse_runner_memory

from .conftest import FIXTURES, lowered_program

RECORDED = [("et_runner_bpte_pass_mps3-an547.txt", "ds_cnn", "cortex-m55"),
            ("et_runner_bpte_pass_mps2-an386.txt", "ds_cnn", "cortex-m4"),
            ("et_runner_mobilenet_v1_025_bpte_pass_mps3-an547.txt", "mobilenet_v1_025", "cortex-m55")]


def test_parser_reads_the_runner_memory_lines() -> None:
    mem = parse_runner_memory((FIXTURES / "et_runner_bpte_pass_mps3-an547.txt").read_text())
    assert mem.method_pool == 62914560 and mem.planned_buffers == {1: 20464}
    assert (mem.used, mem.planned, mem.loaded, mem.input, mem.executor) == (31504, 20464, 11040, 0, 0)
    assert mem.temp_pool == 2097152 and not mem.failures


@pytest.mark.parametrize("fixture,model,target", RECORDED)
def test_prediction_matches_the_runner(fixture: str, model: str, target: str) -> None:
    mem = parse_runner_memory((FIXTURES / fixture).read_text())
    low = lowered_program(model, target)
    rows = compare(analyze_memory(low.pte, low.final), mem)
    bad = [r for r in rows if r["ok"] is False]
    assert not bad, bad
    assert [r["ok"] for r in rows if r["figure"].startswith("planned buffer")] == [True]
    used = next(r for r in rows if r["figure"] == "method_allocator_used")
    assert mem.used <= used["predicted"] <= mem.used * 1.1


def test_out_of_memory_lines_in_words() -> None:
    # the formats of arm_executor_runner.cpp / MemoryAllocator::allocate / Method::load failures
    text = ("I [executorch:arm_executor_runner.cpp:714 runner_init()] Setup Method allocator pool. Size: 30000 bytes.\n"
            "E [executorch:memory_allocator.h:105 allocate()] Memory allocation failed: 180B requested "
            "(adjusted for alignment), 4B available\n"
            "I [executorch:arm_executor_runner.cpp:870 runner_init()] Loading of method forward failed with status 0x21\n")
    mem = parse_runner_memory(text)
    low = lowered_program("ds_cnn")
    msg = explain_failure(mem, analyze_memory(low.pte, low.final))
    assert msg.startswith("Out of memory on the target")
    assert "180 bytes requested, 4 left" in msg and "MemoryAllocationFailed" in msg
    assert "needs 31,504 bytes" in msg and "pool has 30,000" in msg
    assert explain_failure(parse_runner_memory("I [executorch] Model run: 1\n")) is None
    # a load that failed for another reason (QEMU run of maxpool_ceil: 0x14 OperatorMissing) is not OOM
    other = "I [executorch:arm_executor_runner.cpp:870 runner_init()] Loading of method forward failed with status 0x14\n"
    assert explain_failure(parse_runner_memory(other), analyze_memory(low.pte, low.final)) is None


@pytest.mark.parametrize("fixture,pool,first", [
    ("et_runner_ds_cnn_method_pool_30000_mps3-an547.txt", 30000, (20, 4, "lists")),
    ("et_runner_ds_cnn_method_pool_16K_mps3-an547.txt", 16384, (20464, 16384, "planned"))])
def test_a_too_small_pool_fails_where_the_replay_says(fixture: str, pool: int, first: tuple) -> None:
    """Recorded QEMU runs with the pool forced below the prediction: the replay of Method::load names
    the very allocation the runtime refused (its "requested / available" numbers), and the message says so."""
    from backend_core.target.memory.method_alloc import first_refusal
    from backend_core.target.memory.plan import read_plan

    low = lowered_program("ds_cnn")
    r = first_refusal(read_plan(low.pte), pool)
    assert (r.requested, r.available, r.kind) == first
    mem = parse_runner_memory((FIXTURES / fixture).read_text())
    assert mem.method_pool == pool and mem.used is None          # it never got to print its figures
    pred = analyze_memory(low.pte, low.final)
    pred["refusal"] = {"requested": r.requested, "available": r.available, "kind": r.kind}
    rows = compare(pred, mem)
    assert next(x for x in rows if x["figure"].startswith("first refused"))["ok"] is True
    msg = explain_failure(mem, pred)
    assert "the allocation the prediction said the pool would refuse" in msg
    assert f"pool has {pool:,}" in msg and "needs 31,504 bytes" in msg
