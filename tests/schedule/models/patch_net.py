"""A small inverted-residual CNN for patch schedules: strided, depthwise, dilated and 1x1 convs, a
residual add, then a global pool (where the patchable region ends). Channels-last input, as the zoo's."""
import torch


class PatchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = torch.nn.Conv2d(8, 8, 1)
        self.dil = torch.nn.Conv2d(8, 16, 3, padding=2, dilation=2)
        self.down = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.stem(x))
        y = y + self.pw(torch.relu(self.dw(y)))
        y = self.down(torch.relu(self.dil(y)))
        return self.head(torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))


def get_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return PatchNet().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 30, 34).to(memory_format=torch.channels_last),)
