"""Typed errors of the target flow (toolchain, build, simulator). Each names the cause and the fix;
the CLI maps `exit_code` to its exit status (2 bad input / missing tool, 3 build or run failure)."""
from __future__ import annotations

from ..errors import BadInputError, Cancelled, CmlensError

__all__ = [
    "BuildError",
    "Cancelled",
    "SimulatorError",
    "ToolMissingError",
    "UnsupportedTargetError",
]


class ToolMissingError(BadInputError):
    """A tool the step needs is not installed; `install` is the exact command that installs it."""

    def __init__(self, tool: str, install: str, purpose: str = "") -> None:
        why = f" (needed to {purpose})" if purpose else ""
        super().__init__(f"{tool} was not found{why}.", f"To install it:\n  {install}")
        self.tool = tool
        self.install = install


class UnsupportedTargetError(BadInputError):
    """The CPU / simulator pair has no board (e.g. cortex-m85 on QEMU)."""


class BuildError(CmlensError):
    """cmake configure or build failed; `detail` holds the tail of the output."""

    exit_code = 3


class SimulatorError(CmlensError):
    """The simulator could not run the firmware (bad machine, missing file, simulator crash)."""

    exit_code = 3
