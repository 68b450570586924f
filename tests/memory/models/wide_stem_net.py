"""A tiny CNN whose first layer's output does not fit a small MCU (stm32f746: 240 KiB in its largest RAM
region) as ExecuTorch plans it, and fits once its first two layers run patch by patch: the window's "Fit
this board" tests. Its float input (300 KiB) alone is more than that region: with a float input no
schedule fits, the bad-board case."""
import torch


class WideStemNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.pw = torch.nn.Conv2d(8, 16, 1, stride=2)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.dw(torch.relu(self.stem(x))))
        y = torch.relu(self.pw(y))
        return self.head(torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))


def get_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return WideStemNet().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 160, 160).to(memory_format=torch.channels_last),)
