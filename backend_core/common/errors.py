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


# ---- one exit code per cause: every CLI subcommand and every job result uses this table; the README's
# table is generated from it (`python -m backend_core.common.errors`) and tests/app/cli/test_exit_codes.py compares.
EXIT_CODES: tuple[tuple[int, str, tuple[type[CmlensError], ...]], ...] = (
    (0, "done: every step finished (a target run PASSed or RAN)", ()),
    (1, "the check the command makes did not hold: a target run FAILed, fallbacks with `--fail-on-fallback`, "
        "a `gate` regression, a sweep job that failed", ()),
    (2, "bad input, found before any work: the model source, an option, a data folder, a missing tool or "
        "checkout, an output path that cannot be written", (BadInputError,)),
    (3, "ExecuTorch or the target failed: a lowering stage (the message names the stage and node), the "
        "build, the simulator", (StageFailedError, BuildError, SimulatorError)),
    (130, "cancelled (Ctrl-C, Cancel): finished results are kept", (Cancelled,)),
)


def exit_code_table() -> str:
    """The README's exit-code table (Markdown)."""
    rows = ["| exit | cause |", "|---|---|"] + [f"| {code} | {text} |" for code, text, _ in EXIT_CODES]
    return "\n".join(rows)


if __name__ == "__main__":
    print(exit_code_table())
