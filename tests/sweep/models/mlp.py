"""A tiny MLP that lowers fully to cortex_m ops."""
import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def get_example_inputs() -> tuple:
    return (torch.randn(1, 8),)
