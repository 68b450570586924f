"""The runtime around the model in the fit verdict: code + read-only data, .data/.bss, stack and heap
(backend_core/target/memory/runtime.py), from the shipped table, and what it changes in the verdict."""
from __future__ import annotations

import pytest

from backend_core.target.memory import analyze_memory, attach_board
from backend_core.common.boards.specs import custom_board
from backend_core.target.memory.report import attach_runtime, summary_lines
from backend_core.target.memory.runtime import from_table, heap_for, load_table, portable_ops, reservations

from .conftest import lowered_program

TABLE = {"reference": {"executorch": "cff6f4dd32e630945b7188512c1f2b4f102b05ad", "toolchain": "gcc"},
         "cpus": {"cortex-m4": {"core": {"code": 200_000, "data": 3_000, "bss": 20_000},
                                "parts": {"ExecuTorch runtime": 90_000},
                                "ops": {"aten::view_copy.out": {"code": 1_500, "data": 0, "bss": 0},
                                        "aten::add.out": {"code": 9_000, "data": 16, "bss": 0}},
                                "stack_marks": {"ds_cnn": 2_900}, "heap_marks": {"ds_cnn": 4_096}}}}


@pytest.fixture(scope="module")
def ds_cnn_m4() -> dict:
    low = lowered_program("ds_cnn", "cortex-m4")
    return analyze_memory(low.pte, low.final, target="cortex-m4")


def test_table_sums_the_core_and_the_ops_the_program_uses() -> None:
    stack, heap = reservations()
    rt = from_table("cortex-m4", ["aten::view_copy.out"], TABLE)
    assert (rt.source, rt.code, rt.data, rt.bss) == ("table", 201_500, 3_000, 20_000)
    assert (rt.stack, rt.heap) == (stack, heap) and rt.flash == 204_500 and rt.static_ram == 23_000
    assert rt.parts["portable ops"] == 1_500 and rt.ops == ["aten::view_copy.out"]
    unknown = from_table("cortex-m4", ["aten::view_copy.out", "aten::mystery.out"], TABLE)
    assert unknown.code == 201_500 + 9_000            # an op the table lacks counts as the largest measured
    assert "aten::mystery.out is not in the table" in unknown.notes[0]
    assert from_table("cortex-m0", [], TABLE) is None
    assert portable_ops(["cortex_m::quantized_conv2d.out", "aten::view_copy.out", "dim_order_ops::_clone_dim_order.out",
                         "quantized_decomposed::add.out"]) == ["aten::view_copy.out", "dim_order_ops::_clone_dim_order.out",
                                                               "quantized_decomposed::add.out"]


def test_the_runtime_turns_fits_into_does_not_fit(ds_cnn_m4: dict) -> None:
    """A board that holds the model's pools but not the runtime around them: without the runtime the
    verdict said FITS (the old, wrong answer), with it DOES NOT FIT, naming the runtime's rows."""
    rep = dict(ds_cnn_m4)
    pools = rep["method_allocator"]["used"] + rep["temp_allocator_bytes"]
    board = custom_board(pools + 8 * 1024, "1M")
    assert attach_board(dict(rep), board)["verdict"]["fits"]
    rt = from_table("cortex-m4", portable_ops(rep["operators"]), TABLE)
    attach_runtime(rep, rt)
    v = attach_board(rep, board)["verdict"]
    names = [n["name"] for n in v["needs"]]
    assert {"runtime code + read-only data", "runtime .data + .bss", "stack", "heap"} <= set(names)
    assert not v["fits"] and not v["ram_fits"]
    ram = sum(n["bytes"] for n in v["needs"] if n["kind"] == "ram")
    assert ram == pools + rep["etdump_base64_bytes"] + rt.data + rt.bss + rt.stack + rt.heap
    flash = sum(n["bytes"] for n in v["needs"] if n["kind"] == "flash")
    assert flash == rep["pte_bytes"] + rt.code + rt.data
    big = custom_board(ram, flash)                    # exactly the whole firmware: fits with 0 B free
    v = attach_board(rep, big)["verdict"]
    assert v["fits"] and v["ram_free_bytes"] == 0 and v["flash_free_bytes"] == 0
    text = "\n".join(summary_lines(rep))
    assert "runtime (cortex-m4): code + read-only data" in text and "[from the shipped table" in text
    assert "stack high-water mark on QEMU: up to 2,900 B (ds_cnn)" in text
    assert "used on QEMU by the reference runs: ds_cnn 4,096 B" in text


def test_the_shipped_table_covers_the_qemu_cpus_it_claims() -> None:
    """Every CPU row of resources/boards/runtime.json has its core, its measured marks and agrees with the
    ELFs it was measured on (the reference runs are stored beside the row)."""
    table = load_table()
    assert table["cpus"], "resources/boards/runtime.json has no CPU"
    for cpu, row in table["cpus"].items():
        assert row["core"]["code"] > 100_000 and row["stack_marks"] and row["heap_marks"], cpu
        stack, _ = reservations()
        assert max(row["stack_marks"].values()) < stack, cpu
        for model, elf in row["elf"].items():
            # the heap sized from the ETDump bound holds what the run used (the sbrk mark on QEMU)
            assert heap_for(elf["etdump_bytes"], table) >= row["heap_marks"][model], (cpu, model)
            rt = from_table(cpu, elf["ops"], table)
            assert abs(rt.flash - (elf["code"] + elf["data"])) <= 0.05 * (elf["code"] + elf["data"]), (cpu, model)
            assert abs(rt.static_ram - (elf["data"] + elf["bss"])) <= 0.05 * (elf["data"] + elf["bss"]), (cpu, model)
