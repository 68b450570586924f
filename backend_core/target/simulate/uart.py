"""Incremental parser of UART output from ExecuTorch's Arm runner (examples/arm/executor_runner/
arm_executor_runner.cpp, arm_perf_monitor.cpp) and of the kernels/ self-test.

Feed it text or bytes in chunks of any size (partial lines, invalid UTF-8 and control garbage are
fine); each completed line comes back as a UartEvent, and `report` holds everything found so far:
PASS/FAIL per test, error stats, cycle counters, ETDump blocks (base64 decoded), hard faults, error
lines and printed outputs."""
from __future__ import annotations

import base64
import binascii
import codecs
import re
from typing import Any

from backend_core.target.simulate.faults import parse_cmlens_fault, parse_ethosu_fault, parse_ethosu_fault_regs
from backend_core.target.memory.runner_figures import feed_line as feed_memory_line
from backend_core.target.simulate.uart_records import (CycleReport, ErrorStats, EtdumpBlock, OutputValue, TestResult, UartEvent,
                                                       UartReport)

MAX_LINE = 64 * 1024 * 1024  # a line longer than this (no newline in sight) is cut

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffd]")
_EOL = re.compile(r"\r\n|\r|\n")
_ET_LOG = re.compile(r"([DIEWF]) \[executorch:([^:\]\s]+):(\d+)(?: ([^\]]*))?\] ?(.*)$")
_TEST = re.compile(r"TEST: (\w+) index\[(\d+)\] Test_result: (PASS|FAIL)")
_STATS_HEADER = re.compile(r"=== Error stats for testset (\d+) ===")
_STATS_ERROR = re.compile(r"=== Error calculating stats for testset (\d+) ERROR:(-?\w+) ===")
_STAT = re.compile(r"\b(mean|max)_(absolute|relative)_error:\s*([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf))", re.I)
_RUNTIME = re.compile(r"Inference runtime: (\d+) CPU cycles total(?: \(([\d.]+) per inference\))?")
_UNAVAILABLE = re.compile(r"cycles: unavailable(?: \((.*)\))?\s*$")
_PMU = re.compile(r"^(NPU Inferences|NPU delegations|ethos-u : cycle_cnt|Operator\(s\) total|"
                  r"cpu_wait_for_npu_cntr|ethosu_pmu_cycle_cntr|ethosu_pmu_cntr\d+|"
                  r"Inference CPU ratio|Inference NPU ratio)\s*:\s*([-\d.?]+)")
_OUTPUT = re.compile(r"Output\[(\d+)\]\[(\d+)\]: \((int|float|char|bool)\) (\S+)")
_ETDUMP_LINE = re.compile(r'echo "([^"]*)" \| base64 -d\s*>\s*(\S+)')
_MODEL_RUN = re.compile(r"Model run: (\d)")
_SIM_TIMEOUT = "Simulation is stopping. Reason: CPU time has been exceeded"


class UartParser:
    """Feed chunks with feed(); call close() at the end of the stream to flush a partial last line."""

    def __init__(self) -> None:
        self.report = UartReport()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._cur_stats: ErrorStats | None = None
        self._etdump: EtdumpBlock | None = None

    def feed(self, chunk: str | bytes) -> list[UartEvent]:
        """Add output; returns the events of the lines it completed."""
        text = self._decoder.decode(chunk) if isinstance(chunk, bytes) else chunk
        self._buf += text
        events: list[UartEvent] = []
        pos = 0
        for m in _EOL.finditer(self._buf):
            if m.group() == "\r" and m.end() == len(self._buf):
                break  # maybe half of "\r\n"
            events += self._line(self._buf[pos:m.start()])
            pos = m.end()
        self._buf = self._buf[pos:]
        if len(self._buf) > MAX_LINE:
            events += self._line(self._buf)
            self._buf = ""
        return events

    def feed_line(self, line: str) -> list[UartEvent]:
        """Add one complete line (as the simulator drivers deliver them)."""
        return self.feed(line + "\n")

    def close(self) -> list[UartEvent]:
        """End of stream: parse the partial last line, flag an unterminated ETDump block."""
        self._buf += self._decoder.decode(b"", final=True)
        events = self._line(self._buf) if self._buf.strip() else []
        self._buf = ""
        if self._etdump is not None:
            self._etdump.errors.append("ETDump block not terminated by #[END] (output cut off)")
            self.report.etdumps.append(self._etdump)
            self._etdump = None
        return events

    # -- one line ---------------------------------------------------------------------------------
    def _line(self, raw: str) -> list[UartEvent]:
        clean = _CONTROL.sub("", raw)
        self.report.garbage_chars += len(raw) - len(clean)
        line = clean.strip()
        if not line:
            return []
        self.report.lines += 1
        n = self.report.lines
        if self._etdump is not None or line == "#[RUN THIS]":
            ev = self._etdump_line(line, n)
            if ev is not None:
                return [ev]
        log = _ET_LOG.search(line)
        msg = log.group(5) if log else line
        if feed_memory_line(self.report.memory, msg) and msg.startswith("CMLENS MEMORY:"):
            # the board layer's stack/heap high-water marks at exit (kernels/common/memmark.c)
            return [UartEvent("memory", line, n, self.report.memory.board)]
        for handler in (self._fault, self._test, self._stats, self._cycles, self._output):
            ev = handler(line, msg, n)
            if ev is not None:
                return [ev]
        level = log.group(1) if log else ""
        if level in ("E", "F") or "[critical]" in line:
            self.report.errors.append(line)
            return [UartEvent("error", line, n)]
        m = _MODEL_RUN.search(msg)
        if m:
            self.report.model_run_ok = m.group(1) == "1"
        if _SIM_TIMEOUT in line:
            self.report.sim_time_exceeded = True
            self.report.errors.append(line)
            return [UartEvent("error", line, n)]
        return [UartEvent("log" if log else "text", line, n)]

    def _fault(self, line: str, msg: str, n: int) -> UartEvent | None:
        fault = parse_cmlens_fault(line) or parse_ethosu_fault(line)
        if fault is not None:
            fault.line_no = n
            self.report.faults.append(fault)
            return UartEvent("fault", line, n, fault)
        regs = parse_ethosu_fault_regs(line)
        if regs and self.report.faults and "cfsr" not in self.report.faults[-1].registers:
            self.report.faults[-1].add_registers(regs)
            return UartEvent("fault", line, n, self.report.faults[-1])
        return None

    def _test(self, line: str, msg: str, n: int) -> UartEvent | None:
        m = _TEST.search(line)
        if not m:
            return None
        t = TestResult(m.group(1), int(m.group(2)), m.group(3) == "PASS", n)
        self.report.tests.append(t)
        return UartEvent("test", line, n, t)

    def _stats(self, line: str, msg: str, n: int) -> UartEvent | None:
        m = _STATS_HEADER.search(line)
        if m:
            self._cur_stats = ErrorStats(int(m.group(1)))
            self.report.error_stats.append(self._cur_stats)
            return UartEvent("error_stats", line, n, self._cur_stats)
        m = _STATS_ERROR.search(line)
        if m:
            self._cur_stats = None
            self.report.error_stats.append(ErrorStats(int(m.group(1)), error=m.group(2)))
            return UartEvent("error_stats", line, n, self.report.error_stats[-1])
        m = _STAT.search(msg)
        if m and self._cur_stats is not None:
            setattr(self._cur_stats, f"{m.group(1)}_{m.group(2)}_error".lower(), float(m.group(3)))
            return UartEvent("error_stats", line, n, self._cur_stats)
        return None

    def _cycles(self, line: str, msg: str, n: int) -> UartEvent | None:
        cyc = self.report.cycles
        m = _RUNTIME.search(msg)
        if m:
            cyc = self.report.cycles = cyc or CycleReport()
            cyc.total = int(m.group(1))
            cyc.per_inference = float(m.group(2)) if m.group(2) else None
            cyc.available = cyc.total > 0
            if not cyc.available:
                cyc.reason = "the cycle counter read 0 (not enabled or not modelled)"
            return UartEvent("cycles", line, n, cyc)
        m = _UNAVAILABLE.search(msg)
        if m:
            cyc = self.report.cycles = cyc or CycleReport()
            cyc.available, cyc.reason = False, m.group(1) or "unavailable"
            return UartEvent("cycles", line, n, cyc)
        m = _PMU.search(msg)
        if m:
            cyc = self.report.cycles = cyc or CycleReport()
            try:
                cyc.counters[m.group(1)] = float(m.group(2))
            except ValueError:
                pass  # "?.??" when the counter is off
            return UartEvent("cycles", line, n, cyc)
        return None

    def _output(self, line: str, msg: str, n: int) -> UartEvent | None:
        m = _OUTPUT.search(msg)
        if not m:
            return None
        dtype, text = m.group(3), m.group(4)
        value: Any
        try:
            value = {"int": int, "char": int, "float": float}[dtype](text) if dtype != "bool" else text == "true"
        except ValueError:
            value = text
        out = OutputValue(int(m.group(1)), int(m.group(2)), dtype, value)
        self.report.outputs.append(out)
        return UartEvent("output", line, n, out)

    def _etdump_line(self, line: str, n: int) -> UartEvent | None:
        if line == "#[RUN THIS]":
            if self._etdump is not None:
                self._etdump.errors.append("a new #[RUN THIS] started before #[END]")
                self.report.etdumps.append(self._etdump)
            self._etdump = EtdumpBlock()
            return UartEvent("etdump", line, n, self._etdump)
        block = self._etdump
        assert block is not None
        if line == "#[END]":
            block.complete = True
            if not block.files and not block.errors:
                block.errors.append("no base64 payload found in the ETDump block")
            self.report.etdumps.append(block)
            self._etdump = None
            return UartEvent("etdump", line, n, block)
        m = _ETDUMP_LINE.search(line)
        if m:
            try:
                block.files[m.group(2)] = base64.b64decode(m.group(1), validate=True)
            except (binascii.Error, ValueError) as exc:
                block.errors.append(f"{m.group(2)}: corrupt base64 ({exc})")
            return UartEvent("etdump", f'echo "<{len(m.group(1))} base64 chars>" | base64 -d >{m.group(2)}',
                             n, block)
        if line.startswith("#") or line.startswith("python3 -m devtools"):
            return UartEvent("etdump", line, n, block)
        return None  # a log line in the middle of the block: parse it normally


_ECHO_B64 = re.compile(r'echo "([A-Za-z0-9+/=\s]{%d,})"(\s*\|\s*base64 -d)' % 64)
DISPLAY_MAX = 4096   # a displayed line longer than this is cut (after abbreviating base64 payloads)


def abbreviate_line(line: str, max_chars: int = DISPLAY_MAX) -> str:
    """A UART/console line as a person should see it: the ETDump block's `echo "<100+ kB base64>" |
    base64 -d >debug_buffer.bin` becomes `echo "<base64, 118,024 bytes decoded>" | base64 -d >...`,
    and any other line longer than `max_chars` is cut with a count of what was left out. Display only:
    the parser must always get the full line."""
    if len(line) < 64:
        return line

    def short(m: re.Match) -> str:
        payload = "".join(m.group(1).split())
        decoded = len(payload) // 4 * 3 - (len(payload) - len(payload.rstrip("=")))
        return f'echo "<base64, {decoded:,} bytes decoded>"{m.group(2)}'

    line = _ECHO_B64.sub(short, line)
    if len(line) > max_chars:
        line = f"{line[:max_chars]}... <{len(line) - max_chars:,} more characters>"
    return line


def parse_uart(text: str | bytes) -> UartReport:
    """Parse a whole capture at once."""
    p = UartParser()
    p.feed(text)
    p.close()
    return p.report
