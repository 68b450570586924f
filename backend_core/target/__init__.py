"""Target flow (no Qt, no ExecuTorch import): find tools and the ExecuTorch checkout, build the
kernels/ firmware with CMake, run it on QEMU or a Corstone FVP, parse the UART output."""
from __future__ import annotations

from .boards import BOARDS, Board, board_for, gcc_flags, supported_targets
from .build import BuildRequest, BuildResult, KernelBuilder, build_command, cache_dir, configure_command
from .doctor import DoctorReport, run_doctor
from .errors import BuildError, Cancelled, SimulatorError, ToolMissingError, UnsupportedTargetError
from .faults import FaultReport
from .selftest import SelftestResult, run_selftest
from .simulator import FvpRunner, QemuRunner, SimResult, runner_for
from .uart import UartParser, UartReport, parse_uart

__all__ = [
    "BOARDS", "Board", "BuildError", "BuildRequest", "BuildResult", "Cancelled", "DoctorReport",
    "FaultReport", "FvpRunner", "KernelBuilder", "QemuRunner", "SelftestResult", "SimResult",
    "SimulatorError", "ToolMissingError", "UartParser", "UartReport", "UnsupportedTargetError",
    "board_for", "build_command", "cache_dir", "configure_command", "gcc_flags", "parse_uart",
    "run_doctor", "run_selftest", "runner_for", "supported_targets",
]
