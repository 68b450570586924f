"""A small keyword-spotting-like CNN, version 2: the edit widens conv2 (8 -> 16 channels) and adds a
LayerNorm before the classifier (tests/compare: v1/ is the same file before the edit)."""
import torch
from torch import nn


class TinyNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool = nn.AvgPool2d(8)
        self.norm = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu1(self.conv1(x))
        x = self.relu2(self.conv2(x))
        x = self.pool(x).flatten(1)
        x = self.norm(x)
        return self.fc(x)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return TinyNet().eval().to(memory_format=torch.channels_last)


def get_example_inputs() -> tuple:
    g = torch.Generator().manual_seed(1)
    return (torch.randn(1, 3, 8, 8, generator=g).to(memory_format=torch.channels_last),)


def get_calibration_inputs() -> list:
    g = torch.Generator().manual_seed(2)
    return [(torch.randn(1, 3, 8, 8, generator=g).to(memory_format=torch.channels_last),) for _ in range(4)]
