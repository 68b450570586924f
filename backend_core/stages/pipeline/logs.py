"""Capture what ExecuTorch's Cortex-M code logs during one stage (pass warnings such as
"Cannot fuse activation ...", the quantizer report), so it becomes evidence, not noise; and the exceptions
torch logs on its own (`E1205 ... Traceback (most recent call last)` from the fake-tensor dispatcher while a
pass fails), which are kept with the stage and shown only with --verbose."""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Iterator

CAPTURED_LOGGERS = ("executorch.backends.cortex_m", "executorch.backends.arm",
                    "executorch.backends.transforms", "executorch.exir.pass_manager")


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class _HideLogged(logging.Filter):
    """On torch's own stderr handlers: an ERROR record (a logged exception and its traceback) is kept
    here instead of printed; `show` lets it through as well (--verbose)."""

    def __init__(self, show: bool) -> None:
        super().__init__()
        self.show = show
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        if not any(r is record for r in self.records):     # a record passes several handlers
            self.records.append(record)
        return self.show


def _torch_handlers() -> list[logging.Handler]:
    """The handlers torch._logging puts on "torch" and on each of its registered child loggers (they do
    not propagate, so a filter on "torch" alone misses them)."""
    out: list[logging.Handler] = []
    for name, lg in list(logging.Logger.manager.loggerDict.items()):
        if (name == "torch" or name.startswith("torch.")) and isinstance(lg, logging.Logger):
            out.extend(h for h in lg.handlers if h not in out)
    return out


def verbose_logging() -> bool:
    """True unless the face asked for quiet logs (the CLI without -v, the workers: execute.task.quiet_logs
    raises "torch" to ERROR)."""
    return logging.getLogger("torch").getEffectiveLevel() < logging.ERROR


class StageLog:
    """Records of one stage; `warnings()` is what users see, `infos()` holds reports, `logged_errors()`
    the exceptions torch logged itself."""

    def __init__(self, show_torch_errors: bool = True) -> None:
        self.handler = _ListHandler()
        self.torch_errors = _HideLogged(show_torch_errors)

    def logged_errors(self) -> str:
        """torch's logged exceptions of this stage, formatted as torch prints them (for --verbose/JSON)."""
        fmt = logging.Formatter("%(levelname)s %(name)s: %(message)s")
        return "\n".join(fmt.format(r) for r in self.torch_errors.records)

    def warnings(self) -> list[str]:
        return [f"{r.name}: {r.getMessage()}" for r in self.handler.records
                if r.levelno >= logging.WARNING and "deprecated" not in r.getMessage()]

    def infos(self) -> list[str]:
        return [r.getMessage() for r in self.handler.records if r.levelno < logging.WARNING]


@contextmanager
def capture_logs(quiet: bool = True) -> Iterator[StageLog]:
    """Attach a collecting handler; with `quiet`, keep these loggers off stderr meanwhile. torch's own
    logged exceptions are kept off stderr unless logging is verbose (`verbose_logging`)."""
    log = StageLog(show_torch_errors=verbose_logging())
    handlers = _torch_handlers()
    for h in handlers:
        h.addFilter(log.torch_errors)
    saved: list[tuple[logging.Logger, int, bool]] = []
    for name in CAPTURED_LOGGERS:
        lg = logging.getLogger(name)
        saved.append((lg, lg.level, lg.propagate))
        lg.addHandler(log.handler)
        lg.setLevel(logging.INFO)
        if quiet:
            lg.propagate = False
    try:
        yield log
    finally:
        for h in handlers:
            h.removeFilter(log.torch_errors)
        for lg, level, propagate in saved:
            lg.removeHandler(log.handler)
            lg.setLevel(level)
            lg.propagate = propagate
