"""ATCNet's sliding-window attention in small (braindecode `_AttentionBlock` / `_MHA`, issue 46): one
attention block per window in an nn.ModuleList, each `softmax(Q.bmm(K^T) / sqrt(d)).bmm(V)` over heads split
with `torch.cat(x.split(d, -1), 0)`. Whatever a pass does to one block's op it does to the same op of every
other block: --keep-going should take them out together."""
import math

import torch
from torch import nn


class MHA(nn.Module):
    def __init__(self, dim: int = 8, head: int = 4) -> None:
        super().__init__()
        self.head = head
        self.fc_q, self.fc_k, self.fc_v, self.fc_o = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = torch.cat(self.fc_q(x).split(self.head, -1), 0)
        k = torch.cat(self.fc_k(x).split(self.head, -1), 0)
        v = torch.cat(self.fc_v(x).split(self.head, -1), 0)
        w = torch.softmax(q.bmm(k.transpose(-2, -1)) / math.sqrt(self.head), -1)
        return self.fc_o(torch.cat(w.bmm(v).split(x.shape[0], 0), -1))


class Windows(nn.Module):
    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(MHA() for _ in range(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum(b(x[:, i:i + 6]) for i, b in enumerate(self.blocks))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Windows().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 8, 8),)
