"""The one zoo model with trained weights: a small CNN on scikit-learn's bundled handwritten digits
(`load_digits()`: 1,797 8x8 images, values 0..16). Nothing can be downloaded here, but that data set
ships inside the scikit-learn wheel, so an accuracy question ("did int8 cost 0.3 points or 30?") has a
real answer on a real classifier. `scripts/train_digits.py` trains it deterministically; the weights
ship as `weights/digits_cnn.pt` (a state_dict).

The architecture is the Cortex-M classic (DS-CNN style): conv + ReLU, depthwise + pointwise blocks,
a global average pool and one linear layer; every op has a CMSIS-NN kernel in the legacy flow when the
input is fed channels-last, as the zoo feeds its image models."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

WEIGHTS = Path(__file__).resolve().parent / "weights" / "digits_cnn.pt"
TEST_SIZE = 0.25          # held-out share, stratified, random_state=0: 450 test / 1,347 train images
SPLIT_SEED = 0
CALIBRATION_SAMPLES = 64  # the first training images calibrate the zoo entry (never test images)


def make_model() -> Any:
    """An untrained DigitsCNN (the class is built lazily: importing this module must not import torch)."""
    import torch
    from torch import nn

    class DigitsCNN(nn.Module):
        """1x1x8x8 -> 10 logits: 8x8x16 -> depthwise stride 2 + pointwise -> 4x4x32 -> depthwise +
        pointwise -> a 4x4 convolution over the whole map (a dense layer that keeps where the strokes
        are; a global pool loses it and tops out near 94 %) -> 1x1x32 -> linear."""

        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
            self.dw2 = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
            self.pw2 = nn.Conv2d(16, 32, 1)
            self.dw3 = nn.Conv2d(32, 32, 3, padding=1, groups=32)
            self.pw3 = nn.Conv2d(32, 32, 1)
            self.conv4 = nn.Conv2d(32, 32, 4)
            self.fc = nn.Linear(32, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.conv1(x))
            x = torch.relu(self.dw2(x))
            x = torch.relu(self.pw2(x))
            x = torch.relu(self.dw3(x))
            x = torch.relu(self.pw3(x))
            x = torch.relu(self.conv4(x))
            return self.fc(torch.flatten(x, 1))

    return DigitsCNN()


def split() -> tuple[Any, Any, Any, Any]:
    """(x_train, x_test, y_train, y_test): float32 tensors N x 1 x 8 x 8 in [0, 1] and int64 labels,
    the same fixed stratified split for training, calibration and evaluation."""
    import numpy as np
    import torch
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0)[:, None, :, :]
    x_tr, x_te, y_tr, y_te = train_test_split(x, d.target, test_size=TEST_SIZE, random_state=SPLIT_SEED,
                                              stratify=d.target)
    return (torch.from_numpy(x_tr), torch.from_numpy(x_te), torch.from_numpy(y_tr).long(),
            torch.from_numpy(y_te).long())


def _fed(x: Any) -> Any:
    """One image as the lowered program takes it: a batch of one, channels-last (the legacy flow's
    CMSIS-NN convolutions are NHWC)."""
    import torch

    return x.reshape(1, 1, 8, 8).to(memory_format=torch.channels_last)


def trained_model() -> Any:
    """DigitsCNN with the shipped weights; a clear error when the file is missing (a broken install)."""
    import torch

    from backend_core.common.errors import BadInputError

    if not WEIGHTS.is_file():
        raise BadInputError(f"The digits_cnn weights are missing: {WEIGHTS}",
                            "Train them again: python scripts/train_digits.py (about 20 s), or reinstall "
                            "cortexm-lens (the wheel ships them).")
    model = make_model()
    model.load_state_dict(torch.load(WEIGHTS, map_location="cpu", weights_only=True))
    return model.eval()


def build() -> tuple[Any, tuple]:
    """The zoo factory: the trained model and its example input (the first training image)."""
    x_tr, _, _, _ = split()
    return trained_model(), (_fed(x_tr[0]),)


def calibration_inputs() -> list[tuple]:
    """The first CALIBRATION_SAMPLES training images: calibration never sees the test split."""
    x_tr, _, _, _ = split()
    return [(_fed(x),) for x in x_tr[:CALIBRATION_SAMPLES]]


def get_eval_data() -> Iterator[tuple[tuple, int]]:
    """(inputs, label) for every held-out test image, in split order."""
    _, x_te, _, y_te = split()
    for x, y in zip(x_te, y_te):
        yield (_fed(x),), int(y)
