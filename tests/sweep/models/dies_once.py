"""Kills the process that loads it the first time (as an out-of-memory kill would), then loads fine:
a sweep must retry its job once on a fresh worker. The marker file sits beside this file."""
import os
import signal
from pathlib import Path

import torch
from torch import nn

_MARK = Path(__file__).with_suffix(".died")


def get_model() -> nn.Module:
    if not _MARK.exists():
        _MARK.write_text("died once")
        os.kill(os.getpid(), signal.SIGKILL)
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 4))


def get_example_inputs() -> tuple:
    return (torch.randn(1, 8),)
