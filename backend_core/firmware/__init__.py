"""Firmware: build and run on a board (no Qt, no ExecuTorch import): find tools and the ExecuTorch checkout, build the
kernels/ firmware with CMake, run it on QEMU or a Corstone FVP, parse the UART output."""
from __future__ import annotations

from .boards import BOARDS, Board, board_for, gcc_flags, supported_targets
from .build import BuildRequest, BuildResult, KernelBuilder, build_command, cache_dir, configure_command
from .doctor import DoctorReport, run_doctor
from .et_build import EtLibraries, EtLibRequest, ensure_libraries, library_build_command, library_configure_command
from .et_ops import OpCheck, check_checkout_ops, check_ops, read_model_ops
from ..errors import BuildError, Cancelled, SimulatorError, ToolMissingError, UnsupportedTargetError
from .faults import FaultReport
from .selftest import SelftestResult, run_selftest
from .run_result import MissingOpsError, ModelRunResult
from .runner_build import RunnerRequest, build_runner, runner_build_command, runner_configure_command
from .simulator import FvpRunner, QemuRunner, SimResult, runner_for
from .uart import UartParser, UartReport, parse_uart

__all__ = [
    "BOARDS", "Board", "BuildError", "BuildRequest", "BuildResult", "Cancelled", "DoctorReport",
    "EtLibRequest", "EtLibraries", "MissingOpsError", "ModelRunResult", "OpCheck", "RunnerRequest",
    "build_runner", "check_checkout_ops", "check_ops", "ensure_libraries", "library_build_command",
    "library_configure_command", "read_model_ops", "runner_build_command", "runner_configure_command",
    "FaultReport", "FvpRunner", "KernelBuilder", "QemuRunner", "SelftestResult", "SimResult",
    "SimulatorError", "ToolMissingError", "UartParser", "UartReport", "UnsupportedTargetError",
    "board_for", "build_command", "cache_dir", "configure_command", "gcc_flags", "parse_uart",
    "run_doctor", "run_selftest", "runner_for", "supported_targets",
]
