"""Small models that each show one classic reason an op falls back to portable kernels."""
from __future__ import annotations

from typing import Any


def build(name: str) -> tuple[Any, tuple]:
    import torch
    from torch import nn

    torch.manual_seed(0)

    class LayerNormMLP(nn.Module):
        """LayerNorm has no Cortex-M kernel and is not annotated: it runs in float between a
        dequantize and a quantize, and the ReLU after it can no longer be fused."""

        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(16, 32)
            self.norm = nn.LayerNorm(32)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(32, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc2(self.act(self.norm(self.fc1(x))))

    class SoftmaxOverChannels(nn.Module):
        """CMSIS-NN softmax works on the last dim only; softmax over channels is rejected."""

        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.fc = nn.Linear(8 * 8 * 8, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.softmax(self.conv(x), dim=1)
            return self.fc(y.flatten(1))

    class MaxPoolCeil(nn.Module):
        """max_pool2d with ceil_mode=True has no CMSIS-NN kernel: it stays portable int8."""

        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.pool = nn.MaxPool2d(2, ceil_mode=True)
            self.fc = nn.Linear(8 * 4 * 4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(torch.flatten(self.pool(torch.relu(self.conv(x))), 1))

    # Image inputs channels-last, as ExecuTorch's Cortex-M tests feed convs: each model then
    # shows its one lesson, not also the legacy flow's NCHW conv fallback.
    cl = torch.channels_last
    models = {
        "LayerNormMLP": (LayerNormMLP, (torch.randn(1, 16),)),
        "SoftmaxOverChannels": (SoftmaxOverChannels, (torch.randn(1, 3, 8, 8).to(memory_format=cl),)),
        "MaxPoolCeil": (MaxPoolCeil, (torch.randn(1, 3, 9, 9).to(memory_format=cl),)),
    }
    cls, inputs = models[name]
    return cls().eval(), inputs
