"""The UART parser on recorded output (kernels/ firmware and ExecuTorch's stock runner on QEMU) and a
reconstructed FVP log, fed whole, in random chunks and with garbage."""
from __future__ import annotations

import base64
import random
from pathlib import Path

import pytest

from backend_core.target.simulate.uart_records import NOT_CYCLE_ACCURATE
from backend_core.target.simulate.uart import UartParser, parse_uart

from tests.helpers.firmware import FIXTURES
from backend_core.target.judge.outcome import uart_outcome


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def chunked(data: bytes, seed: int) -> UartParser:
    """Feed random 1..40-byte chunks (splitting lines, CRLF pairs and UTF-8 sequences)."""
    rng = random.Random(seed)
    p = UartParser()
    i = 0
    while i < len(data):
        n = rng.randint(1, 40)
        p.feed(data[i:i + n])
        i += n
    p.close()
    return p


def test_recorded_selftest_output() -> None:
    r = parse_uart(fixture("selftest_qemu_mps3-an547.txt"))
    assert uart_outcome(r) == "PASS" and r.passed is True
    assert [(t.suite, t.index, t.passed) for t in r.tests] == [("selftest", i, True) for i in range(6)]
    assert r.cycles is not None and not r.cycles.available
    assert r.cycles.reason == "DWT cycle counter does not advance (not modelled by this simulator)"
    assert r.faults == [] and r.errors == []


def test_recorded_fault_output() -> None:
    r = parse_uart(fixture("fault_qemu_mps2-an386.txt"))
    assert uart_outcome(r) == "FAULT"
    f = r.faults[0]
    assert f.kind == "BusFault"
    assert f.registers == {"cfsr": 0x8200, "hfsr": 0, "mmfar": 0, "bfar": 0xF0000000, "pc": 0x80E,
                           "lr": 0x809, "xpsr": 0x61000000, "sp": 0x200081B8, "exc_return": 0xFFFFFFF9}
    assert f.summary() == ("BusFault at pc=0x0000080e: precise bus error: a load/store to an address no "
                           "device answers (address 0xf0000000)")


def test_executorch_runner_pass() -> None:
    """Recorded: ExecuTorch's stock runner with DS-CNN (.bpte, M55) on QEMU mps3-an547."""
    r = parse_uart(fixture("et_runner_bpte_pass_mps3-an547.txt"))
    assert uart_outcome(r) == "PASS"
    assert [(t.suite, t.index, t.passed) for t in r.tests] == [("BundleIO", 0, True)]
    (s,) = r.error_stats
    assert (s.testset, s.mean_absolute_error, s.max_absolute_error, s.mean_relative_error,
            s.max_relative_error) == (0, 0.0, 0.0, 0.0, 0.0)
    assert len(r.outputs) == 12
    assert (r.outputs[0].output, r.outputs[0].index, r.outputs[0].dtype, r.outputs[0].value) == (0, 0, "float", 0.106868)
    assert r.outputs[11].value == 0.015267
    assert r.model_run_ok is True
    assert r.cycles is None  # the runner prints no cycle lines without Ethos-U / a PMU
    assert r.errors == [] and r.faults == []
    (block,) = r.etdumps      # the libraries were built with the event tracer
    assert block.complete and block.errors == [] and list(block.files) == ["etdump.bin"]
    assert len(block.etdump) == 1836 and block.etdump[8:12] == b"ED00"
    assert r.garbage_chars == 1  # the runner's final ET_LOG(Info, "\04")


def test_executorch_runner_second_model_pass() -> None:
    """Recorded: MobileNetV1-0.25 (.bpte, M55) on QEMU mps3-an547."""
    r = parse_uart(fixture("et_runner_mobilenet_v1_025_bpte_pass_mps3-an547.txt"))
    assert uart_outcome(r) == "PASS" and r.model_run_ok is True
    assert [o.value for o in r.outputs] == [-0.023999, 0.04042]
    assert r.error_stats[0].max_absolute_error == 0.0
    assert len(r.etdumps[0].etdump) == 3752


def test_executorch_runner_pass_on_cortex_m4() -> None:
    """Recorded: DS-CNN lowered for cortex-m4 on QEMU mps2-an386 (smaller method pool on the MPS2)."""
    r = parse_uart(fixture("et_runner_bpte_pass_mps2-an386.txt"))
    assert uart_outcome(r) == "PASS" and r.model_run_ok is True and r.faults == []
    assert len(r.outputs) == 12 and r.error_stats[0].max_absolute_error == 0.0
    assert any("method_allocator_used:     26984 / 6291456" in ln for ln in fixture(
        "et_runner_bpte_pass_mps2-an386.txt").decode().splitlines())


def test_executorch_semihosting_runner_pass() -> None:
    """Recorded: the semihosting runner; no Output/ETDump lines on the UART (they go to host files)."""
    r = parse_uart(fixture("et_runner_semihosting_mobilenet_v1_025_mps3-an547.txt"))
    assert uart_outcome(r) == "PASS" and r.model_run_ok is True
    assert r.outputs == [] and r.etdumps == [] and r.errors == []
    assert r.error_stats[0].mean_absolute_error == 0.0


def test_executorch_runner_fail_then_abort() -> None:
    """Recorded: DS-CNN .bpte with every expected output +0.5. FAIL, then ET_CHECK_MSG aborts (a UDF trap
    in et_pal_abort, reported by the board layer as a UsageFault): the outcome stays FAIL."""
    r = parse_uart(fixture("et_runner_bpte_fail_mps3-an547.txt"))
    assert uart_outcome(r) == "FAIL" and r.passed is False
    s = r.error_stats[0]
    assert (s.mean_absolute_error, s.max_absolute_error, s.mean_relative_error, s.max_relative_error) == (
        0.5, 0.5, 0.947404, 1.139127)
    assert r.model_run_ok is False
    # E/F lines other than the TEST line (which is a test result, not an error line):
    assert [e.split("] ", 1)[1] for e in r.errors] == [
        "Method's output data mismatched the expected one.",
        "Model output don't match expected BundleIO bpte ref data. rtol=0.010000 atol=0.010000",
        "Bundle verification failed with status 0x20",
        "In function main(), assert failed (model_ok == true): Problem running model",
    ]
    assert r.faults[0].kind == "UsageFault" and r.faults[0].flags == ["UNDEFINSTR"]


def test_fvp_output_with_pmu_and_etdump() -> None:
    r = parse_uart(fixture("et_runner_etdump_corstone-300-fvp.txt"))
    assert uart_outcome(r) == "PASS"
    c = r.cycles
    assert c is not None and c.available
    assert (c.total, c.per_inference, c.label) == (2541234, 2541234.0, NOT_CYCLE_ACCURATE)
    assert c.counters["NPU Inferences"] == 1
    assert c.counters["Inference CPU ratio"] == 100.0
    assert c.counters["ethosu_pmu_cntr3"] == 0
    (block,) = r.etdumps
    assert block.complete and block.errors == []
    assert block.etdump == b"\x1c\x00\x00\x00ED00" + bytes(range(200))
    assert block.debug_buffer == bytes((i * 7) % 256 for i in range(96))
    assert r.garbage_chars == 1  # the EOT byte the runner sends to stop the FVP
    assert r.errors == []


@pytest.mark.parametrize("name", ["selftest_qemu_mps3-an547.txt", "fault_qemu_mps2-an386.txt",
                                  "et_runner_bpte_pass_mps3-an547.txt", "et_runner_bpte_fail_mps3-an547.txt",
                                  "et_runner_etdump_corstone-300-fvp.txt",
                                  "et_runner_mobilenet_v1_025_bpte_pass_mps3-an547.txt",
                                  "et_runner_semihosting_mobilenet_v1_025_mps3-an547.txt",
                                  "et_runner_bpte_pass_mps2-an386.txt"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunked_feeding_gives_the_same_report(name: str, seed: int) -> None:
    whole = parse_uart(fixture(name))
    assert chunked(fixture(name), seed).report == whole


def test_events_stream_as_lines_complete() -> None:
    p = UartParser()
    assert p.feed("TEST: BundleIO ind") == []
    assert p.feed("ex[0] Test_result: PASS\r") == []  # maybe the first half of \r\n
    (ev,) = p.feed("\nI [executorch:r.cpp:1 f()] next")
    assert ev.kind == "test" and ev.data.passed and ev.line_no == 1
    assert [e.kind for e in p.feed("\n")] == ["log"]
    assert [e.kind for e in p.feed(b"E [executorch:x.cpp:1 f()] boom\npartial")] == ["error"]
    assert [e.line for e in p.close()] == ["partial"]


def test_garbage_bytes_do_not_hide_results() -> None:
    noise = bytes(range(0, 32)) + b"\xff\xfe\x80" + bytes(range(0x7F, 0xA0))
    data = (noise + b"\n" + noise + b"TEST: BundleIO index[0] Test_result: FAIL\r\n\x00\x00"
            + b"I [executorch:a.cpp:9 v()] \xc3\x28 === Error stats for testset 0 ===\n"
            + b"I [executorch:a.cpp:9 v()]  max_absolute_error:  1.500000\n" + noise)
    r = chunked(data, 7)
    assert [(t.index, t.passed) for t in r.report.tests] == [(0, False)]
    assert r.report.error_stats[0].max_absolute_error == 1.5
    assert r.report.garbage_chars > 40


def test_ethosu_two_line_hard_fault() -> None:
    r = parse_uart("Hard fault. irq=-13, pc=0x10001a2c, lr=0x10001a05, xpsr=0x21000000, sp=0x3007ff60\n"
                   "            cfsr=0x00000400 bfar=0x00000000 mmfar=0x00000000\n")
    (f,) = r.faults
    assert (f.kind, f.source, f.registers["pc"], f.registers["cfsr"]) == ("HardFault", "ethos-u", 0x10001A2C, 0x400)
    assert f.flags == ["IMPRECISERR"]


def test_etdump_cut_off_or_corrupt() -> None:
    good = base64.b64encode(b"ED00payload").decode()
    r = parse_uart(f'#[RUN THIS]\necho "{good}" | base64 -d >etdump.bin\n')
    assert r.etdumps[0].complete is False
    assert r.etdumps[0].etdump == b"ED00payload"
    assert "not terminated" in r.etdumps[0].errors[0]
    r = parse_uart('#[RUN THIS]\necho "@@not*base64" | base64 -d >etdump.bin\n#[END]\n')
    assert r.etdumps[0].etdump is None and "corrupt base64" in r.etdumps[0].errors[0]


def test_fvp_time_limit_and_critical_lines() -> None:
    r = parse_uart("[critical] ethosu driver error\n"
                   "Info: Simulation is stopping. Reason: CPU time has been exceeded.\n")
    assert r.sim_time_exceeded
    assert len(r.errors) == 2
    assert uart_outcome(r) == "NO RESULT"


def test_cycle_lines_zero_and_unavailable() -> None:
    r = parse_uart("Inference runtime: 0 CPU cycles total (0.00 per inference)\n")
    assert r.cycles is not None and not r.cycles.available and "read 0" in r.cycles.reason
    r = parse_uart("cycles: unavailable (this core has no DWT cycle counter)\n")
    assert r.cycles.reason == "this core has no DWT cycle counter"


# --- display of the ETDump's base64 lines (the parser keeps the full text) ------------------------------
def test_abbreviate_line_shortens_base64_echo_lines_only() -> None:
    import base64

    from backend_core.target.simulate.uart import DISPLAY_MAX, abbreviate_line

    payload = base64.b64encode(bytes(range(256)) * 461 + b"\x01").decode()          # 118,017 bytes
    line = f'echo "{payload}" | base64 -d >debug_buffer.bin'
    assert abbreviate_line(line) == 'echo "<base64, 118,017 bytes decoded>" | base64 -d >debug_buffer.bin'
    for n in (1, 2, 3, 4, 57):                                          # padding: decoded size is exact
        p = base64.b64encode(b"x" * n * 50).decode()
        assert f"<base64, {n * 50:,} bytes decoded>" in abbreviate_line(f'echo "{p}" | base64 -d >etdump.bin')
    short = 'echo "aGVsbG8=" | base64 -d >x.bin'
    assert abbreviate_line(short) == short                              # short lines stay verbatim
    text = "I [executorch:arm_executor_runner.cpp:1171 write_etdump()] [base64] buffer size: 157368"
    assert abbreviate_line(text) == text
    long = "Z" * (DISPLAY_MAX + 1000)
    assert abbreviate_line(long).endswith("... <1,000 more characters>")


def test_recorded_etdump_lines_decode_in_full_but_display_short() -> None:
    from backend_core.target.simulate.uart import UartParser, abbreviate_line

    rec = Path(__file__).resolve().parents[1] / "fixtures" / "target" / "uart_etdump_tiny_conv_pass_mps3-an547.txt"
    parser = UartParser()
    shown = []
    for line in rec.read_text().splitlines():
        parser.feed_line(line)
        shown.append(abbreviate_line(line))
    files = parser.report.etdumps[0].files
    assert len(files["debug_buffer.bin"]) == 732 and len(files["etdump.bin"]) == 1984
    assert 'echo "<base64, 732 bytes decoded>" | base64 -d >debug_buffer.bin' in shown
    assert 'echo "<base64, 1,984 bytes decoded>" | base64 -d >etdump.bin' in shown
