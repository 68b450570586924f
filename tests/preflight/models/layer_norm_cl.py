"""LayerNorm over the last dim of a channels-last [1, 8, 4, 4] input: LayerNorm stays in float on the
portable native_layer_norm kernel, which requires a contiguous input (op_native_layer_norm.cpp:103,
tensor_is_default_dim_order), and to_executorch inserts no copy for it. `nchw`: the same model on a
contiguous input (the near miss)."""
import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.LayerNorm(4).eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 8, 4, 4).to(memory_format=torch.channels_last),)


def nchw() -> tuple:
    torch.manual_seed(1)
    return get_model(), (torch.randn(1, 8, 4, 4),)
