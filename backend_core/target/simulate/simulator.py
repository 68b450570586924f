"""Run firmware on a simulator and stream its UART: QEMU (`qemu-system-arm -M <board>`, free) or
Arm's Corstone FVP (the parameters of ExecuTorch's backends/arm/scripts/run_fvp.sh, semihosting on).
A time limit stops a hung firmware; cancel() stops a run from any thread."""
from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from backend_core.common.boards.table import ICOUNT_UNIT, Board
from backend_core.common.errors import Cancelled, SimulatorError, ToolMissingError
from backend_core.target.toolchain.process import LineCallback, StreamingProcess
from backend_core.target.toolchain.tools import apt_install, fvp_install_hint
from backend_core.target.simulate.uart_records import UartEvent, UartReport
from backend_core.target.simulate.uart import UartParser
from backend_core.target.timing.trace import trace_args

EventCallback = Callable[[UartEvent], None]


@dataclass
class SimResult:
    """How a firmware run ended: exit status, time, the UART lines and what the parser found."""

    board: Board
    command: list[str]
    exit_code: int | None
    elapsed_s: float
    timeout_s: float
    timed_out: bool
    report: UartReport
    uart: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    problem: str = ""          # why the run did not end normally, in words; "" when it did


class _Run:
    """Shared by both drivers: stream, parse, time limit, cancel."""

    def __init__(self, on_line: LineCallback | None, on_event: EventCallback | None,
                 cancel_event: threading.Event | None) -> None:
        self.on_line = on_line
        self.on_event = on_event
        self.cancel_event = cancel_event or threading.Event()

    def cancel(self) -> None:
        self.cancel_event.set()

    def _execute(self, board: Board, argv: list[str], timeout: float, cwd: str | Path | None = None,
                 env: Mapping[str, str] | None = None, limit_s: float | None = None) -> SimResult:
        """Run argv; `timeout` is the host-side kill limit, `limit_s` the limit reported to the user."""
        parser = UartParser()
        uart: list[str] = []

        def line(stream: str, text: str) -> None:
            if stream == "stdout":
                uart.append(text)
                for ev in parser.feed_line(text):
                    if self.on_event:
                        self.on_event(ev)
            if self.on_line:
                self.on_line("uart" if stream == "stdout" else stream, text)

        proc = StreamingProcess(argv, on_line=line, cwd=cwd, env=env, cancel_event=self.cancel_event)
        try:
            res = proc.run(timeout=timeout)
        except FileNotFoundError as exc:
            raise SimulatorError(f"Cannot start {argv[0]}: {exc}") from exc
        for ev in parser.close():
            if self.on_event:
                self.on_event(ev)
        if res.cancelled:
            raise Cancelled(f"The run on {board.name} was cancelled.")
        result = SimResult(board, argv, None if res.timed_out else res.returncode, res.elapsed_s,
                           timeout if limit_s is None else limit_s,
                           res.timed_out or parser.report.sim_time_exceeded, parser.report, uart, res.stderr)
        result.problem = _problem(result)
        return result


def _problem(r: SimResult) -> str:
    if r.timed_out:
        from backend_core.target.simulate.last_seen import describe_timeout  # what was last seen, not "it hung"

        return describe_timeout(r.report, r.uart, r.timeout_s)
    if r.report.faults:
        return "the firmware faulted: " + r.report.faults[0].summary()
    err = "\n".join(r.stderr)
    if "Lockup" in err or r.exit_code == 134:
        return ("the CPU locked up (a fault inside a fault handler, or a semihosting call while "
                "semihosting is off)")
    if r.exit_code not in (0, None) and not r.uart and err:
        return f"{r.command[0]} failed: {r.stderr[0]}"
    return ""


def tick_unit(board: Board, icount: bool) -> str:
    """What the board layer's et_pal_current_ticks() (and so every ETDump profiling event) counts.

    QEMU with `-icount shift=N` advances its virtual clock 2**N ns per executed instruction; the board
    layer turns SysTick ticks back into that instruction count (kernels/common/ticks.c): exact, the same
    on every run, but instructions, not cycles. Without -icount the same number follows host time."""
    if board.simulator != "qemu":
        return board.tick_unit
    if icount and board.icount_shift is not None:
        return ICOUNT_UNIT
    return "host-time SysTick ticks (QEMU without -icount): not a cost measure"


class QemuRunner(_Run):
    """qemu-system-arm with UART0 on stdout and semihosting for the exit status and host files.

    icount=True adds `-icount shift=N` (N from the board's row in kernels/boards.json): the firmware's
    tick counter then counts instructions executed, deterministically (see tick_unit()). Use it for
    profiling runs; it costs some QEMU speed (bench/qemu_icount.py)."""

    def __init__(self, board: Board, *, qemu: str | None = None, on_line: LineCallback | None = None,
                 on_event: EventCallback | None = None, cancel_event: threading.Event | None = None,
                 icount: bool = False) -> None:
        super().__init__(on_line, on_event, cancel_event)
        if board.simulator != "qemu":
            raise ValueError(f"{board.name} is not a QEMU board")
        if icount and board.icount_shift is None:
            raise ValueError(f"{board.name} has no icount_shift in kernels/boards.json")
        self.board = board
        self.qemu = qemu or shutil.which("qemu-system-arm")
        self.icount = icount
        self.trace_log: Path | None = None   # set: QEMU logs every TB it runs (per-class counts, timing/)
        self.log_shim: Path | None = None    # with trace_log: log_buffer.py's shim, preloaded into QEMU

    @property
    def tick_unit(self) -> str:
        """The unit of the firmware's tick counts in this runner's runs."""
        return tick_unit(self.board, self.icount)

    def command(self, elf: str | Path, semihosting_args: Sequence[str] = ()) -> list[str]:
        """The qemu-system-arm argument list. `semihosting_args` become the firmware's argv."""
        config = "enable=on,target=native" + "".join(f",arg={a}" for a in semihosting_args)
        icount = ["-icount", f"shift={self.board.icount_shift}"] if self.icount else []
        trace = trace_args(self.trace_log) if self.trace_log is not None else []
        return [self.qemu or "qemu-system-arm", "-M", self.board.machine, *icount, *trace, "-display", "none",
                "-monitor", "none", "-serial", "stdio", "-semihosting-config", config,
                "-kernel", str(elf)]

    def require(self) -> None:
        """ToolMissingError with the install command when qemu-system-arm is missing."""
        if not self.qemu:
            raise ToolMissingError("qemu-system-arm", apt_install("qemu-system-arm"),
                                   "run firmware on QEMU's Cortex-M boards")

    def run(self, elf: str | Path, timeout: float = 60.0, semihosting_args: Sequence[str] = (),
            cwd: str | Path | None = None) -> SimResult:
        """Run until the firmware exits, the time limit passes, or cancel()."""
        self.require()
        if not Path(elf).is_file():
            raise SimulatorError(f"Firmware {elf} does not exist.", "Build it first.")
        env = None
        if self.trace_log is not None and self.log_shim is not None:
            from backend_core.target.simulate.log_buffer import shim_env

            env = shim_env(self.log_shim, self.trace_log, dict(os.environ))
        result = self._execute(self.board, self.command(elf, semihosting_args), timeout, cwd, env)
        if result.exit_code not in (0, None) and not result.uart and result.stderr and not result.problem:
            raise SimulatorError(f"QEMU could not run {elf}: {result.stderr[0]}")
        return result


class FvpRunner(_Run):
    """A Corstone FVP, with the parameters run_fvp.sh uses (SSE-320 uses its mps4_board names)."""

    def __init__(self, board: Board, *, fvp: str | None = None, on_line: LineCallback | None = None,
                 on_event: EventCallback | None = None, cancel_event: threading.Event | None = None,
                 num_macs: int = 128) -> None:
        super().__init__(on_line, on_event, cancel_event)
        if board.simulator != "fvp":
            raise ValueError(f"{board.name} is not an FVP board")
        self.board = board
        self.fvp = fvp or shutil.which(board.machine)
        self.num_macs = num_macs

    def command(self, elf: str | Path, timeout: float = 600.0, cwd: str | Path | None = None,
                cmd_line: str | None = None) -> list[str]:
        """The FVP argument list. `cmd_line` is the semihosting command line (e.g.
        `executor_runner -m model.bpte -i input.bin -o out`), `cwd` the semihosting directory."""
        sse320 = "SSE-320" in self.board.machine
        board_p = "mps4_board" if sse320 else "mps3_board"
        cpu_p = "mps4_board.subsystem.cpu0" if sse320 else "cpu0"
        npu_p = "mps4_board.subsystem.ethosu" if sse320 else "ethosu"
        params = [
            f"{npu_p}.num_macs={self.num_macs}",
            f"{board_p}.visualisation.disable-visualisation=1",
            *(["vis_hdlcd.disable_visualisation=1"] if sse320 else []),
            f"{board_p}.telnetterminal0.start_telnet=0",
            f"{board_p}.uart0.out_file=-",
            f"{board_p}.uart0.shutdown_on_eot=1",
            f"{cpu_p}.semihosting-enable=1",
            f"{cpu_p}.semihosting-stack_base=0",
            f"{cpu_p}.semihosting-heap_limit=0",
            *([f"{cpu_p}.semihosting-cwd={cwd}"] if cwd else []),
            f"{npu_p}.extra_args=--fast",
            *([f"{cpu_p}.semihosting-cmd_line={cmd_line}"] if cmd_line else []),
        ]
        argv = [self.fvp or self.board.machine]
        for p in params:
            argv += ["-C", p]
        return argv + ["-a", str(elf), "--timelimit", f"{timeout:g}"]

    def require(self) -> None:
        """ToolMissingError saying where to get the FVP when it is not installed."""
        if not self.fvp:
            raise ToolMissingError(self.board.machine, fvp_install_hint(self.board.machine),
                                   "run firmware on Arm's Corstone FVP")

    def env(self) -> dict[str, str]:
        """Corstone-320 from ExecuTorch's arm-scratch needs its python/lib on LD_LIBRARY_PATH."""
        env = dict(os.environ)
        if self.fvp:
            lib = Path(self.fvp).resolve().parent.parent.parent / "python" / "lib"
            if "SSE-320" in self.board.machine and lib.is_dir():
                env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib), env.get("LD_LIBRARY_PATH")]))
        return env

    def run(self, elf: str | Path, timeout: float = 600.0, cwd: str | Path | None = None,
            cmd_line: str | None = None) -> SimResult:
        """Run with the FVP's own --timelimit plus a host-side limit 30 s later."""
        self.require()
        if not Path(elf).is_file():
            raise SimulatorError(f"Firmware {elf} does not exist.", "Build it first.")
        argv = self.command(elf, timeout, cwd, cmd_line)
        return self._execute(self.board, argv, timeout + 30.0, cwd, self.env(), limit_s=timeout)


def runner_for(board: Board, *, icount: bool = False, **kw) -> QemuRunner | FvpRunner:
    """The driver for the board's simulator. `icount`: QEMU counts instructions (ignored on an FVP,
    which has no such mode)."""
    if board.simulator == "qemu":
        return QemuRunner(board, icount=icount, **kw)
    return FvpRunner(board, **kw)
