"""Kills every process that loads it: a sweep must give up after one retry and keep a row saying so."""
import os
import signal

import torch
from torch import nn


def get_model() -> nn.Module:
    os.kill(os.getpid(), signal.SIGKILL)
    return nn.Linear(8, 4)


def get_example_inputs() -> tuple:
    return (torch.randn(1, 8),)
