"""The board layer on QEMU, with the self-test firmware (no ExecuTorch): printf with the C99 length
modifiers ExecuTorch's log messages use, the SysTick instruction counter behind et_pal_current_ticks()
under `-icount` (deterministic, linear, one tick per instruction), and the linker script CMake generates
from kernels/boards.json."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from backend_core.common.boards.table import ICOUNT_UNIT, board_for
from backend_core.target.build.kernels import BuildRequest
from backend_core.target.doctor.selftest import workload_ticks
from backend_core.target.judge.outcome import simulated_outcome
from backend_core.target.simulate.simulator import QemuRunner

from tests.helpers.firmware import QEMU_TARGETS

WORKLOAD_ITERATIONS = 2_000_000  # kernels/selftest/main.c


def _selftest(firmware, target: str, icount: bool):
    runner = QemuRunner(board_for(target), icount=icount)
    result = runner.run(firmware(target).elfs["cmlens_selftest"], timeout=30)
    assert result.exit_code == 0 and simulated_outcome(result) == "PASS", result.uart
    return result


@pytest.mark.parametrize("target", ("cortex-m55", "cortex-m4"))
def test_printf_formats_zu_zd_and_s_like_executorch_log(firmware, target: str) -> None:
    """newlib (nano and Debian's full build) printed 'zu ... zu:zd in operator <garbage>' for this."""
    uart = _selftest(firmware, target, icount=False).uart
    assert ("printf: 3 input tensors have different dim orders; instruction 17:-2 in operator "
            "aten::_softmax.out") in uart


def _loop_length(elf: Path) -> int:
    """Instructions in the body of the self-test's workload loop, read from its disassembly."""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(elf)],
                         capture_output=True, text=True, check=True).stdout
    body = out.split("<workload>:\n", 1)[1].split("\n\n", 1)[0]
    insns = [(int(m.group(1), 16), m.group(2)) for m in
             (re.match(r"\s*([0-9a-f]+):\s+(.*)", line) for line in body.splitlines()) if m
             and not m.group(2).startswith(".word")]
    for addr, text in insns:
        b = re.match(r"(le|bne\S*|blt\S*|bcc\S*|bhi\S*|bgt\S*)\s+(?:lr, )?([0-9a-f]+)", text)
        if b and int(b.group(2), 16) < addr:
            return sum(1 for a, _ in insns if int(b.group(2), 16) <= a <= addr)
    raise AssertionError("no backward branch in workload():\n" + body)


@pytest.mark.parametrize("target", QEMU_TARGETS)
def test_icount_ticks_are_deterministic_instruction_counts(firmware, target: str) -> None:
    first = _selftest(firmware, target, icount=True)
    second = _selftest(firmware, target, icount=True)
    t1, t2 = workload_ticks(first.uart), workload_ticks(second.uart)
    assert set(t1) == {"1x", "2x"}
    assert t1 == t2, "the same firmware must count the same ticks on every run under -icount"
    assert abs(t1["2x"] / t1["1x"] - 2.0) < 0.02, t1      # twice the work, twice the ticks
    # One tick is one instruction: the extra 2 million iterations cost exactly the loop's instructions
    # (plus a few for the call), whatever the board's SysTick clock.
    loop = _loop_length(firmware(target).elfs["cmlens_selftest"])
    extra = t1["2x"] - t1["1x"]
    assert loop * WORKLOAD_ITERATIONS <= extra <= loop * WORKLOAD_ITERATIONS + 100, (loop, t1)
    unit = next(line for line in first.uart if line.startswith("ticks: unit="))
    assert ICOUNT_UNIT in unit and f"icount_shift={board_for(target).icount_shift}" in unit
    assert QemuRunner(board_for(target), icount=True).tick_unit == ICOUNT_UNIT


@pytest.mark.parametrize("target", ("cortex-m55", "cortex-m4", "cortex-m33"))
def test_tick_counter_is_monotonic_across_systick_wraps(firmware, target: str) -> None:
    """Dense reads across a 24-bit wrap, with the wrap interrupt pending (masked) and serviced."""
    elf = firmware(target).elfs["cmlens_ticks_wrap"]
    result = QemuRunner(board_for(target), icount=True).run(elf, timeout=60)
    assert result.exit_code == 0, result.uart
    phases = {m.group(1): m for m in (re.match(
        r"ticks_wrap: (\w+) reads=(\d+) wraps=(\d+) backwards=(\d+) max_step=(\d+)$", line)
        for line in result.uart) if m}
    assert set(phases) == {"masked", "unmasked"}
    for m in phases.values():
        assert int(m.group(2)) > 10_000 and m.group(3) == "1" and m.group(4) == "0"
        assert int(m.group(5)) < 1000  # no jump of a whole wrap (2**24 ticks) anywhere
    # the last line of the firmware itself; the board layer's memory marks follow it at exit
    assert [line for line in result.uart if line][-2:] == ["ticks_wrap: PASS", result.uart[-1]]
    assert result.uart[-1].startswith("CMLENS MEMORY: stack_used=")


def test_without_icount_the_ticks_are_not_called_instructions(firmware) -> None:
    runner = QemuRunner(board_for("cortex-m55"))
    assert "-icount" not in runner.command("fw.elf")
    assert "not a cost measure" in runner.tick_unit
    assert workload_ticks(_selftest(firmware, "cortex-m55", icount=False).uart).keys() == {"1x", "2x"}


@pytest.mark.parametrize("target, sim", [(t, "qemu") for t in QEMU_TARGETS] + [("cortex-m85", "fvp")])
def test_generated_linker_script_is_the_boards_json_memory_map(firmware, build_root: Path,
                                                               target: str, sim: str) -> None:
    board = board_for(target, sim)
    firmware(target, sim)
    script = (BuildRequest(board, build_root=build_root).build_dir / "cmlens_board.ld").read_text()
    regions = re.findall(r"^\s*(\w+) \((\w+)\) : ORIGIN = (0x[0-9A-Fa-f]+), LENGTH = (0x[0-9A-Fa-f]+)$",
                         script, re.M)
    assert [(n, a, int(o, 16), int(length, 16)) for n, a, o, length in regions] == [
        (r.name, r.access, r.origin, r.length) for r in board.memory]
    assert re.findall(r'REGION_ALIAS\("(\w+)", (\w+)\);', script) == list(board.linker_aliases)
    assert dict(board.linker_aliases)["STACK"] == dict(board.sections)["DATA"]
    sizes = dict(re.findall(r"^__(STACK|HEAP)_SIZE = DEFINED\(__\w+\) \? __\w+ : (0x[0-9A-Fa-f]+);$", script, re.M))
    assert {k: int(v, 16) for k, v in sizes.items()} == {"STACK": board.stack_bytes, "HEAP": board.heap_bytes}
    assert script.rstrip().endswith("INCLUDE cmlens_sections.ld")


def test_cli_selftest_icount_prints_instruction_counts(firmware, build_root: Path) -> None:
    """`cmlens selftest --icount`: the summary gives the workload counts and names them instructions."""
    import io

    from app.cli import build_parser

    loop = _loop_length(firmware("cortex-m4").elfs["cmlens_selftest"])
    args = build_parser().parse_args(["selftest", "--target", "cortex-m4", "--icount", "--quiet",
                                      "--build-dir", str(build_root)])
    out = io.StringIO()
    assert args.func(args, out=out, err=io.StringIO()) == 0
    line = next(x for x in out.getvalue().splitlines() if x.startswith("workload ticks:"))
    m = re.fullmatch(r"workload ticks: 1x ([\d,]+), 2x ([\d,]+) \(instructions executed \(QEMU -icount\), "
                     r"not cycles\)", line)
    assert m, line
    one, two = (int(g.replace(",", "")) for g in m.groups())
    assert loop * WORKLOAD_ITERATIONS <= one < loop * WORKLOAD_ITERATIONS + 1000 and abs(two / one - 2) < 0.01


MEMPROBES = ("cmlens_memprobe", "cmlens_memprobe_deep", "cmlens_memprobe_heap_over")   # kernels/CMakeLists.txt


@pytest.fixture(scope="session")
def memprobes(firmware, build_root: Path):
    """memprobes(target) -> {probe: ELF}: kernels/selftest/memprobe.c built into the same build tree."""
    from backend_core.target.build.kernels import KernelBuilder

    built: dict[str, dict[str, Path]] = {}

    def get(target: str) -> dict[str, Path]:
        if target not in built:
            firmware(target)          # configured by the session's build first (same directory)
            req = BuildRequest(board_for(target), MEMPROBES, build_root=build_root)
            built[target] = KernelBuilder(req).run().elfs
        return built[target]

    return get


@pytest.mark.parametrize("target", QEMU_TARGETS)
def test_stack_high_water_mark_follows_the_deepest_frame(memprobes, target: str) -> None:
    """The startup paints the stack; the mark printed at exit grows by exactly the extra 6000 B frame."""
    runner = QemuRunner(board_for(target))
    marks = {}
    for probe in ("cmlens_memprobe", "cmlens_memprobe_deep"):
        result = runner.run(memprobes(target)[probe], timeout=30)
        assert result.exit_code == 0, result.uart
        assert any(line.startswith("CMLENS MEMORY: stack_used=") for line in result.uart), result.uart
        marks[probe] = result.report.memory.board
    small, deep = marks["cmlens_memprobe"], marks["cmlens_memprobe_deep"]
    assert 6000 <= small.stack_used <= 6000 + 512, small       # the 6000 B frame + main's and startup's
    assert deep.stack_used - small.stack_used == 6000, (small, deep)
    assert small.stack_size == 32768 and not small.stack_full and small.problems() == []


@pytest.mark.parametrize("target", ("cortex-m55", "cortex-m4"))
def test_heap_high_water_mark_and_a_refused_malloc(memprobes, target: str) -> None:
    runner = QemuRunner(board_for(target))
    ok = runner.run(memprobes(target)["cmlens_memprobe"], timeout=30)
    assert ok.exit_code == 0 and "memprobe: malloc ok" in ok.uart, ok.uart
    mark = ok.report.memory.board
    assert mark.heap_size == 0x10000 and mark.heap_refused == 0
    # 20000 B + stdout's buffer, taken from sbrk in newlib's page-sized steps
    assert 20000 < mark.heap_used <= 20000 + 1024 + 8192, mark
    over = runner.run(memprobes(target)["cmlens_memprobe_heap_over"], timeout=30)
    assert over.exit_code == 3 and "memprobe: malloc refused" in over.uart, over.uart
    bad = over.report.memory.board
    assert bad.heap_refused >= 1 and bad.heap_used < bad.heap_size
    assert any("refused" in p and "__HEAP_SIZE" in p for p in bad.problems())


def test_a_fault_still_reports_the_marks(firmware) -> None:
    """The fault handler exits through cmlens_exit: the marks come after the CMLENS FAULT line."""
    result = QemuRunner(board_for("cortex-m4")).run(firmware("cortex-m4").elfs["cmlens_fault"], timeout=30)
    assert result.exit_code == 105
    lines = [line for line in result.uart if line.startswith("CMLENS ")]
    assert lines[0].startswith("CMLENS FAULT: BusFault") and lines[1].startswith("CMLENS MEMORY: stack_used=")
    assert result.report.memory.board is not None and result.report.memory.board.stack_used > 0


def _f746_verdict(heap_region: str = "SRAM2") -> dict:
    """A fit verdict's placement for the STM32F746 (backend_core.target.memory.fit's needs, as JSON)."""
    where = {"runtime code + read-only data": "FLASH", ".pte": "FLASH", "runtime .data + .bss": "DTCM",
             "stack": "DTCM", "heap": heap_region, "method allocator pool": "SRAM1", "temp allocator pool": "SRAM1"}
    return {"needs": [{"name": n, "kind": "flash" if r == "FLASH" else "ram", "region": r, "bytes": 1}
                      for n, r in where.items()]}


def test_an_mcus_sizes_link_and_run_on_the_qemu_board_of_its_core(toolchain, build_root: Path) -> None:
    """stm32f746 (M7) on mps2-an500: its flash at 0, DTCM/SRAM1/SRAM2 at the chip's own addresses inside
    SSRAM23; each section in the region the verdict chose; the self-test runs there."""
    from backend_core.target.build.kernels import KernelBuilder
    from backend_core.common.boards.sized import sized_board
    from backend_core.common.boards.specs import board_named

    board = sized_board(board_named("stm32f746"), _f746_verdict(), build_root / "f746", stack=0x2000, heap=0x4000)
    assert board.machine == "mps2-an500" and board.cpu == "cortex-m7" and board.qemu_board == "mps2-an500"
    assert [(r.name, r.origin, r.length) for r in board.memory] == [
        ("FLASH", 0, 1024 * 1024), ("DTCM", 0x20000000, 64 * 1024), ("SRAM1", 0x20010000, 240 * 1024),
        ("SRAM2", 0x2004C000, 16 * 1024)]
    req = BuildRequest(board, ("cmlens_selftest",), build_root=build_root,
                       defines={"CMLENS_BOARDS_JSON": board.table_file})
    elf = KernelBuilder(req).run().elfs["cmlens_selftest"]
    script = (req.build_dir / "cmlens_board.ld").read_text()
    assert 'REGION_ALIAS("HEAP", SRAM2);' in script and 'REGION_ALIAS("POOL", SRAM1);' in script
    syms = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    addr = {name: int(a, 16) for a, _, name in (line.split() for line in syms.splitlines() if len(line.split()) == 3)}
    assert addr["__StackLimit"] == 0x20000000                    # first in DTCM: an overflow leaves the region
    assert 0x2004C000 <= addr["__end__"] < addr["__HeapLimit"] <= 0x20050000
    result = QemuRunner(board).run(elf, timeout=30)
    assert result.exit_code == 0 and simulated_outcome(result) == "PASS", result.uart
    mark = result.report.memory.board
    assert mark.stack_size == 0x2000 and mark.heap_size == 0x4000 and mark.heap_refused == 0


def test_a_heap_too_big_for_its_region_fails_to_link_with_the_linkers_count(toolchain, build_root: Path) -> None:
    from backend_core.common.errors import BuildError
    from backend_core.target.build.kernels import KernelBuilder
    from backend_core.common.boards.sized import link_overflow, sized_board
    from backend_core.common.boards.specs import board_named

    board = sized_board(board_named("stm32f746"), _f746_verdict(), build_root / "f746-over", stack=0x2000,
                        heap=0x5000)                              # 20 KiB heap in the 16 KiB SRAM2
    req = BuildRequest(board, ("cmlens_selftest",), build_root=build_root / "over",
                       defines={"CMLENS_BOARDS_JSON": board.table_file})
    with pytest.raises(BuildError) as err:
        KernelBuilder(req).run()
    assert "does not fit the board's memory" in err.value.message
    assert link_overflow(err.value.detail.splitlines()) == [("SRAM2", 0x5000 - 0x4000)]
