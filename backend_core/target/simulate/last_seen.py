"""What a firmware was doing when the time limit stopped it, in words, from its UART lines.

Why: "the firmware hung" was reported for a runner that had printed `Test_result: PASS` and was still
sending a 16 s base64 debug buffer over the UART (issue 9, item 5). A user needs the last thing seen
and which limit to raise, not a guess."""
from __future__ import annotations

import re
from typing import Any, Sequence

_WRITING = re.compile(r"^# Writing (\S+) \[base64\]")
_ECHO_START = re.compile(r'^echo "([A-Za-z0-9+/=]*)')
_NAMES = {"debug_buffer.bin": "the ETDump debug buffer (debug_buffer.bin: every intermediate output)",
          "etdump.bin": "the ETDump (etdump.bin)"}


def _etdump_phase(uart: Sequence[str]) -> str | None:
    """'sending <file>' when the UART stopped inside an ETDump block (#[RUN THIS] without #[END])."""
    start = None
    for i in range(len(uart) - 1, -1, -1):
        line = uart[i].strip()
        if line == "#[END]":
            return None
        if line == "#[RUN THIS]":
            start = i
            break
    if start is None:
        return None
    sending, received = None, 0
    for line in uart[start + 1:]:
        s = line.strip()
        m = _WRITING.match(s)
        if m:
            sending, received = m.group(1), 0
            continue
        e = _ECHO_START.match(s)
        if e and sending:
            received = len(e.group(1)) * 3 // 4
            if s.endswith(f">{sending}"):                  # that file arrived whole; the next one is due
                sending, received = None, 0
    if sending is None:
        return "the runner was inside its ETDump block (base64 over the UART)"
    what = _NAMES.get(sending, sending)
    got = f", {received:,} bytes of it received" if received else ""
    return f"the runner was still sending {what} as base64 over the UART{got}"


def _shorten(line: str, n: int = 120) -> str:
    line = line.strip()
    return line if len(line) <= n else line[:n] + f"... ({len(line):,} characters)"


def describe_timeout(report: Any, uart: Sequence[str], limit_s: float) -> str:
    """One sentence: what was printed (a test verdict first), what was going on, and the fix."""
    seen = []
    for t in getattr(report, "tests", []):
        seen.append(f"`Test_result: {'PASS' if t.passed else 'FAIL'}` (testset {t.index}) was printed")
    phase = _etdump_phase(uart)
    if phase:
        doing = phase
        fix = ("raise --timeout (the base64 transfer takes ~16 s for mobilenet_v1_025's debug buffer), or drop "
               "--etdump; on QEMU a .bpte's ETDump goes to host files through semihosting instead")
    elif not uart:
        doing = "the firmware printed nothing on the UART (it may not have booted)"
        fix = "check the board/CPU pair, or raise --timeout"
    else:
        doing = f"the last UART line was `{_shorten(uart[-1])}`"
        fix = "raise --timeout if the model is big; otherwise the firmware is stuck after that line"
    head = (", then ".join(seen) + ", then " if seen else "")
    return (f"timed out after {limit_s:g} s: {head}{doing} when the {limit_s:g} s limit hit "
            f"(it never exited through semihosting). Fix: {fix}.")
