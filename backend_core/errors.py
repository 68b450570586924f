"""Typed errors carry the exit code and a user-facing message, so the CLI and GUI can
report a cause and a fix without showing a traceback."""
from __future__ import annotations


class CmlensError(Exception):
    """Base error: `message` says what happened, `hint` what to do about it."""

    exit_code = 3

    def __init__(self, message: str, hint: str = "", *, detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.detail = detail  # the original traceback text, shown with --verbose

    def user_text(self) -> str:
        text = self.message
        if self.hint:
            text += "\n" + self.hint
        return text


class BadInputError(CmlensError):
    """The model source, options or inputs are wrong (exit code 2)."""

    exit_code = 2


class StageFailedError(CmlensError):
    """A pipeline stage raised (exit code 3); names the stage and, for a pass, the node."""

    exit_code = 3

    def __init__(self, stage: str, message: str, hint: str = "", *, node: str | None = None,
                 detail: str = "") -> None:
        super().__init__(message, hint, detail=detail)
        self.stage = stage
        self.node = node


class Cancelled(CmlensError):
    """The user stopped the work."""

    exit_code = 130


# ---- target flow (toolchain, build, simulator): exit 2 bad input / missing tool, 3 failure
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
