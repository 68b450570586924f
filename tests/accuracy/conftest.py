"""Accuracy tests run the real pipeline and the real evaluation (no mocks). Each model is lowered once
per session through a Job (the one road to a lowering); tests reuse its kept stages and evaluate on small
subsets. Files are written under pytest's tmp paths only (pytest-xdist safe)."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A user's model file the tests did not take from the zoo: the digits architecture written out here (its
# source lines are this file's), the shipped trained weights, and a deliberately poor calibration (one
# random image) so that int8 flips some predictions. preprocess() turns a class-folder PNG into the input.
MODEL_FILE = '''
import numpy as np
import torch
from torch import nn

from backend_core.stages.models.digits import WEIGHTS, split


class Digits(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.dw2 = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
        self.pw2 = nn.Conv2d(16, 32, 1)
        self.dw3 = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.pw3 = nn.Conv2d(32, 32, 1)
        self.conv4 = nn.Conv2d(32, 32, 4)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.dw2(x))
        x = torch.relu(self.pw2(x))
        x = torch.relu(self.dw3(x))
        x = torch.relu(self.pw3(x))
        x = torch.relu(self.conv4(x))
        return self.fc(torch.flatten(x, 1))


def get_model():
    m = Digits()
    m.load_state_dict(torch.load(WEIGHTS, weights_only=True))
    return m.eval()


def get_example_inputs():
    return (split()[0][0:1].to(memory_format=torch.channels_last),)


def get_calibration_inputs():
    g = torch.Generator().manual_seed(0)
    return [(torch.rand(1, 1, 8, 8, generator=g).to(memory_format=torch.channels_last),)]


def preprocess(image):
    a = np.asarray(image.convert("L"), dtype=np.float32) / 255.0
    return torch.from_numpy(a.copy()).reshape(1, 1, 8, 8)
'''


@dataclass
class Evaluated:
    result: Any          # JobResult (lower + evaluate)
    programs: Any        # EvalPrograms of its lowering, for more evaluations
    folder: Path         # where the test's files are


def train_script() -> Any:
    spec = importlib.util.spec_from_file_location("train_digits", ROOT / "scripts" / "train_digits.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_eval_job(model: str, **evaluate: Any) -> Any:
    from backend_core.orchestration.jobs import Job, execute_job
    from backend_core.orchestration.jobs.spec import EvaluateOptions

    res = execute_job(Job(model, steps=("lower", "evaluate"), evaluate=EvaluateOptions(**evaluate)))
    res.raise_error()
    return res


def write_npy_folder(folder: Path, n: int, offset: int = 0) -> Path:
    """The first n digits test images as .npy (without the batch dimension) + labels.csv with a header."""
    import numpy as np

    from backend_core.stages.models.digits import split

    _, x_te, _, y_te = split()
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["file,label"]
    for i in range(offset, offset + n):
        np.save(folder / f"d{i:03d}.npy", x_te[i].numpy())
        lines.append(f"d{i:03d}.npy,{int(y_te[i])}")
    (folder / "labels.csv").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="session")
def digits(tmp_path_factory: pytest.TempPathFactory) -> Evaluated:
    """digits_cnn (the zoo's trained model) evaluated on its whole held-out split, once."""
    from backend_core.analyses.accuracy import EvalPrograms

    res = run_eval_job("digits_cnn")
    return Evaluated(res, EvalPrograms.from_lowering(res.lowering), tmp_path_factory.mktemp("digits"))


@pytest.fixture(scope="session")
def user_model(tmp_path_factory: pytest.TempPathFactory) -> Evaluated:
    """The model file above, evaluated on a --data folder of 150 .npy digits + labels.csv."""
    from backend_core.analyses.accuracy import EvalPrograms

    folder = tmp_path_factory.mktemp("user")
    (folder / "model.py").write_text(MODEL_FILE)
    data = write_npy_folder(folder / "npy", 150)
    res = run_eval_job(str(folder / "model.py"), data=str(data))
    return Evaluated(res, EvalPrograms.from_lowering(res.lowering), folder)
