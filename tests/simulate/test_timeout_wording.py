"""Timeout wording (issue 9, item 5): the problem says what was last seen. The UART text is the real
output of a QEMU M55 run of the stock runner with --etdump (tiny conv model), cut where a time limit
would cut it: inside the debug buffer's base64 line after `Test_result: PASS`."""
from __future__ import annotations

from pathlib import Path

from backend_core.target.simulate.last_seen import describe_timeout
from backend_core.target.simulate.uart import UartParser

REC = Path(__file__).resolve().parents[1] / "fixtures" / "target" / "uart_etdump_tiny_conv_pass_mps3-an547.txt"


def _cut(predicate, keep_chars: int | None = None):
    lines = REC.read_text().splitlines()
    i = next(n for n, ln in enumerate(lines) if predicate(ln))
    cut = lines[:i] + ([lines[i][:keep_chars]] if keep_chars else [])
    parser = UartParser()
    for ln in cut[:-1]:
        parser.feed_line(ln)
    parser.feed(cut[-1])            # the partial last line, as the process driver delivers it at the kill
    parser.close()
    return parser.report, cut


def test_timeout_inside_the_debug_buffer_after_pass() -> None:
    report, uart = _cut(lambda ln: ln.startswith('echo "') and ln.endswith(">debug_buffer.bin"), keep_chars=400)
    text = describe_timeout(report, uart, 1)
    assert text.startswith("timed out after 1 s: `Test_result: PASS` (testset 0) was printed, then the runner was "
                           "still sending the ETDump debug buffer (debug_buffer.bin: every intermediate output) as "
                           "base64 over the UART, 295 bytes of it received when the 1 s limit hit")
    assert "raise --timeout" in text and "semihosting" in text
    assert "hung" not in text


def test_timeout_after_the_debug_buffer_names_the_etdump() -> None:
    report, uart = _cut(lambda ln: ln.startswith('echo "') and ln.endswith(">etdump.bin"), keep_chars=100)
    text = describe_timeout(report, uart, 2.5)
    assert "then the runner was still sending the ETDump (etdump.bin) as base64" in text


def test_timeout_before_anything_and_after_a_plain_line() -> None:
    assert "printed nothing on the UART" in describe_timeout(UartParser().report, [], 3)
    report, uart = _cut(lambda ln: "Model run" in ln)
    text = describe_timeout(report, uart, 3)
    assert "Test_result" not in text.split("the last UART line")[0] or "PASS" in text
    assert "the last UART line was `" in text
