"""linear(x) * torch.zeros(...) + linear(x): the zeros are a float constant the quantizer leaves
unquantized, and ExecuTorch 1.5.1 still rewrites the multiply into cortex_m::quantized_mul with one
float32 operand (torch.ao.nn.quantizable.LSTM's zero initial state does the same). No pass complains;
on QEMU M55 the runner aborts in validate_cmsis_nn_tensor_requirements ("Input2 dtype must be 1, got 6")."""
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.gate = nn.Linear(4, 3)

    def forward(self, x):
        c = torch.zeros(x.shape[0], 3)
        return self.lin(x) * c + self.lin(x)


def get_model():
    torch.manual_seed(0)
    return M().eval()


def get_example_inputs():
    return (torch.linspace(-1, 1, 8).reshape(2, 4),)


class QuantizedOperands(M):
    """The near miss: the multiply's second operand is another linear's output (int8 on both sides)."""

    def forward(self, x):
        return self.lin(x) * self.gate(x) + self.lin(x)


def near():
    torch.manual_seed(0)
    return QuantizedOperands().eval(), get_example_inputs()


class FloatDivisor(M):
    """The same with a divide (ATCNet's `scores / sqrt(d)` after --keep-going left the bmm in float): ExecuTorch
    rewrites it into cortex_m::quantized_div with a float32 dividend, which op_quantized_div.cpp:90 rejects alike, and
    whose host reference raises a TypeError (so the bundle's expected outputs cannot be computed either)."""

    def forward(self, x):
        return torch.full((x.shape[0], 3), 2.0) / self.lin(x) + self.lin(x)


def div():
    torch.manual_seed(0)
    return FloatDivisor().eval(), get_example_inputs()
