"""`--rewrite rnn-cells`: every nn.LSTM / nn.GRU of a copy of the model written as its cell equations over
nn.Linear, unrolled over the time steps at export, so that the quantizer sees linear, sigmoid, tanh, mul and
add, which all have Cortex-M patterns (quantized_linear, the quantized_activation lookup table,
quantized_mul, quantized_add). ExecuTorch's Cortex-M backend has no LSTM support yet (an open PR,
pytorch/executorch#21024): without the rewrite the module stays in float and to_edge decomposes it into a
few hundred portable float ops.

Opt-in, like --channels-last: it changes the float program (not its values: the equations are PyTorch's
own, `torch.nn.LSTM` / `torch.nn.GRU` documentation), and the report states it. One Linear per gate, so no
split of a fused gate vector (data movement on portable kernels); GRU's `(1 - z)` is computed as
`sigmoid(-a)` by a second pair of Linears with negated weights (there is no quantized sub), exactly the same
value in real arithmetic and within float rounding of PyTorch's. Not covered (the module is left as it is,
and the report says so): bidirectional, proj_size, a non-default activation; dropout is inert in eval."""
from __future__ import annotations

import copy
from typing import Any, cast

NAME = "rnn-cells"
REWRITES = (NAME,)
DESCRIPTION = ("every nn.LSTM / nn.GRU written as its cell equations over nn.Linear (one per gate), unrolled "
               "over the time steps (--rewrite rnn-cells; same values within float rounding)")
LSTM_GATES = ("i", "f", "g", "o")     # PyTorch's order of the gate blocks in weight_ih_l{k}
GRU_GATES = ("r", "z", "n")


def _linear(weight: Any, bias: Any | None, negate: bool = False) -> Any:
    import torch
    from torch import nn

    lin = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    sign = -1.0 if negate else 1.0
    with torch.no_grad():
        lin.weight.copy_(weight * sign)
        if bias is not None:
            lin.bias.copy_(bias * sign)
    return lin


def _gate_linears(rnn: Any, layer: int, gates: tuple[str, ...], kind: str) -> Any:
    """{gate: nn.Linear} of the `kind` ("ih" or "hh") weights of `layer`, one block of rows per gate."""
    from torch import nn

    w = getattr(rnn, f"weight_{kind}_l{layer}").detach()
    b = getattr(rnn, f"bias_{kind}_l{layer}").detach() if rnn.bias else None
    h = rnn.hidden_size
    return nn.ModuleDict({g: _linear(w[i * h:(i + 1) * h], None if b is None else b[i * h:(i + 1) * h])
                          for i, g in enumerate(gates)})


def supported(rnn: Any) -> str:
    """"" when `rnn` can be rewritten, else why not."""
    if rnn.bidirectional:
        return "bidirectional"
    if getattr(rnn, "proj_size", 0):
        return "proj_size"
    return ""


def _cells_class() -> Any:
    import torch
    from torch import nn

    class RnnCells(nn.Module):
        """An nn.LSTM or nn.GRU as its cell equations over one nn.Linear per gate (same call signature)."""

        def __init__(self, rnn: nn.RNNBase) -> None:
            super().__init__()
            self.mode = "LSTM" if isinstance(rnn, nn.LSTM) else "GRU"
            gates = LSTM_GATES if self.mode == "LSTM" else GRU_GATES
            self.hidden, self.layers, self.batch_first = rnn.hidden_size, rnn.num_layers, rnn.batch_first
            self.ih = nn.ModuleList(_gate_linears(rnn, k, gates, "ih") for k in range(self.layers))
            self.hh = nn.ModuleList(_gate_linears(rnn, k, gates, "hh") for k in range(self.layers))
            # The default zero state as a Linear with zero weights and bias over the first step's input: exactly
            # 0.0 in float, but a tensor the program computes. A literal torch.zeros is folded by convert_pt2e
            # into a float constant (hh(0) = its bias), and the add it feeds then hands a LUT sigmoid a float
            # input: AtenToCortexMPass fails ("quantized_activation input must be int8").
            self.zero = nn.ModuleList(_linear(rnn.get_parameter("weight_ih_l0").new_zeros(self.hidden, rnn.input_size if k == 0
                                                                         else self.hidden), None)
                                      for k in range(self.layers))
            if self.mode == "GRU":      # 1 - z == sigmoid(-a): the z gate's Linears with negated weights
                self.ih_zc = nn.ModuleList(self._negated(rnn, k, "ih") for k in range(self.layers))
                self.hh_zc = nn.ModuleList(self._negated(rnn, k, "hh") for k in range(self.layers))

        @staticmethod
        def _negated(rnn: nn.RNNBase, k: int, kind: str) -> nn.Linear:
            h = rnn.hidden_size
            w = getattr(rnn, f"weight_{kind}_l{k}").detach()[h:2 * h]
            b = getattr(rnn, f"bias_{kind}_l{k}").detach()[h:2 * h] if rnn.bias else None
            return _linear(w, b, negate=True)

        def _lstm_step(self, k: int, x: torch.Tensor, h: torch.Tensor,
                       c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            ih, hh = cast(nn.ModuleDict, self.ih[k]), cast(nn.ModuleDict, self.hh[k])
            pre = {g: ih[g](x) + hh[g](h) for g in LSTM_GATES}
            i, f = torch.sigmoid(pre["i"]), torch.sigmoid(pre["f"])
            g, o = torch.tanh(pre["g"]), torch.sigmoid(pre["o"])
            c = f * c + i * g
            return o * torch.tanh(c), c

        def _gru_step(self, k: int, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
            ih, hh = cast(nn.ModuleDict, self.ih[k]), cast(nn.ModuleDict, self.hh[k])
            r = torch.sigmoid(ih["r"](x) + hh["r"](h))
            z = torch.sigmoid(ih["z"](x) + hh["z"](h))
            zc = torch.sigmoid(self.ih_zc[k](x) + self.hh_zc[k](h))
            n = torch.tanh(ih["n"](x) + r * hh["n"](h))
            return zc * n + z * h

        def forward(self, x: torch.Tensor, state: Any = None) -> tuple[torch.Tensor, Any]:
            unbatched = x.dim() == 2
            if unbatched:
                x = x.unsqueeze(0 if self.batch_first else 1)
            if not self.batch_first:
                x = x.transpose(0, 1)
            if state is not None and unbatched:
                state = tuple(s.unsqueeze(1) for s in state) if self.mode == "LSTM" else state.unsqueeze(1)
            hs, cs = [], []
            for k in range(self.layers):
                h: Any = None
                c: Any = None
                if state is not None:
                    h, c = (state[0][k], state[1][k]) if self.mode == "LSTM" else (state[k], None)
                if h is None:         # PyTorch's default state: zeros
                    h = self.zero[k](x[:, 0])
                    c = h if self.mode == "LSTM" else None
                outs = []
                for t in range(x.shape[1]):
                    if self.mode == "LSTM":
                        h, c = self._lstm_step(k, x[:, t], h, c)
                    else:
                        h = self._gru_step(k, x[:, t], h)
                    outs.append(h)
                x = torch.stack(outs, 1)
                hs.append(h)
                cs.append(c)
            out = x if self.batch_first else x.transpose(0, 1)
            h_n = torch.stack(hs, 0)
            final: Any = (h_n, torch.stack(cs, 0)) if self.mode == "LSTM" else h_n
            if unbatched:
                out = out.squeeze(0 if self.batch_first else 1)
                final = tuple(s.squeeze(1) for s in final) if self.mode == "LSTM" else final.squeeze(1)
            return out, final

    return RnnCells


def rnn_cells_copy(module: Any) -> tuple[Any, dict[str, str]]:
    """A deep copy of `module` with every rewritable nn.LSTM / nn.GRU replaced by its cells;
    {qualified name: "rewritten" | why it was left}. The user's module is never touched."""
    from torch import nn

    model = copy.deepcopy(module)
    cells = _cells_class()
    done: dict[str, str] = {}
    for name, sub in list(model.named_modules()):
        if type(sub) not in (nn.LSTM, nn.GRU):
            continue
        why = supported(sub)
        done[name] = f"left as {type(sub).__name__}: {why} is not covered" if why else "rewritten"
        if why:
            continue
        parent_name, _, attr = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, attr, cells(sub).eval())
    return model.eval(), done
