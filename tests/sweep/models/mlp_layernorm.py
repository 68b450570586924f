"""The same MLP with a LayerNorm: the quantizer has no pattern for it, so it falls back to float."""
import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.Linear(16, 4))


def get_example_inputs() -> tuple:
    return (torch.randn(1, 8),)
