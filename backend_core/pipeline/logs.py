"""Capture what ExecuTorch's Cortex-M code logs during one stage (pass warnings such as
"Cannot fuse activation ...", the quantizer report), so it becomes evidence, not noise."""
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


class StageLog:
    """Records of one stage; `warnings()` is what users see, `infos()` holds reports."""

    def __init__(self) -> None:
        self.handler = _ListHandler()

    def warnings(self) -> list[str]:
        return [f"{r.name}: {r.getMessage()}" for r in self.handler.records
                if r.levelno >= logging.WARNING and "deprecated" not in r.getMessage()]

    def infos(self) -> list[str]:
        return [r.getMessage() for r in self.handler.records if r.levelno < logging.WARNING]


@contextmanager
def capture_logs(quiet: bool = True) -> Iterator[StageLog]:
    """Attach a collecting handler; with `quiet`, keep these loggers off stderr meanwhile."""
    log = StageLog()
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
        for lg, level, propagate in saved:
            lg.removeHandler(log.handler)
            lg.setLevel(level)
            lg.propagate = propagate
