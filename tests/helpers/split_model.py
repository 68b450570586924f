"""A model as real ones are written: split over files. `model.py` imports `helper.Block` (a sibling
module) and `blocks.head.Head` (a package beside it) and reads `scale.txt` next to itself through
`__file__`; `python model.py` runs it, and so must cmlens."""
from __future__ import annotations

from pathlib import Path

HELPER = '''import torch


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.fc(x))
'''

# The edit of issue 20: a LayerNorm in the helper, which the Cortex-M quantizer leaves in float.
HELPER_WITH_LAYERNORM = '''import torch


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x):
        return self.norm(torch.relu(self.fc(x)))
'''

HEAD = '''import torch


class Head(torch.nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.out = torch.nn.Linear(16, 4)
        with torch.no_grad():
            self.out.weight.mul_(scale)        # the data file shapes the weights, not the graph

    def forward(self, x):
        return self.out(x)
'''

MODEL = '''from pathlib import Path

import torch
from helper import Block
from blocks.head import Head

SCALE = float((Path(__file__).parent / "scale.txt").read_text())


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.head = Head(SCALE)

    def forward(self, x):
        return self.head(self.block(x))


def get_model():
    torch.manual_seed(0)
    return Net()


def get_example_inputs():
    return (torch.randn(1, 16),)


def build():
    return get_model(), get_example_inputs()


if __name__ == "__main__":
    print(get_model()(*get_example_inputs()).shape)
'''


def write_split_model(folder: Path) -> Path:
    """model.py, helper.py, blocks/{__init__,head}.py and scale.txt in `folder`; returns model.py."""
    (folder / "blocks").mkdir(parents=True, exist_ok=True)
    (folder / "helper.py").write_text(HELPER)
    (folder / "blocks" / "__init__.py").write_text("")
    (folder / "blocks" / "head.py").write_text(HEAD)
    (folder / "scale.txt").write_text("1.0\n")
    (folder / "model.py").write_text(MODEL)
    return folder / "model.py"
