"""The zoo's two trained sequence models, the most common recurrent workloads on a microcontroller: an
LSTM keyword spotter over MFCC-like frames and a CNN + GRU activity recogniser over a 3-axis accelerometer
window. Nothing can be downloaded here, so each trains on a synthetic but learnable task generated from a
fixed seed (the data is part of the model: `split()` gives the same train/test split every time), and the
weights ship as state_dicts (`scripts/train_sequences.py` trains both deterministically in about a minute).

Both are written as a user writes them, with nn.LSTM / nn.GRU: ExecuTorch's Cortex-M backend leaves those in
float (its LSTM support is an open PR, pytorch/executorch#21024), which is what these models are in the zoo to
show; `--rewrite rnn-cells` (backend_core.stages.fallback.rnn_cells) writes them as their cell equations over
nn.Linear so the gates quantize."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
CALIBRATION_SAMPLES = 32   # the first training samples calibrate the zoo entry (never test samples)

# lstm_kws: 49 frames x 10 coefficients (the MLPerf Tiny KWS input), 8 keywords, each a sequence of three
# "phonemes" (fixed spectral shapes) in its own order; onsets and lengths vary, noise on top. A bag of frames
# cannot tell "a b c" from "c b a": the order is the feature, so the recurrence has to learn it.
KWS_FRAMES, KWS_COEFFS, KWS_CLASSES, KWS_HIDDEN = 49, 10, 8, 32
KWS_WORDS = ((0, 1, 2), (2, 1, 0), (1, 3, 4), (4, 3, 1), (0, 4, 2), (2, 4, 0), (3, 0, 5), (5, 0, 3))
# cnn_gru_har: 128 samples x 3 axes (2.56 s at 50 Hz), 6 activities that differ in cadence, amplitude, the
# axis gravity is on and, for the two stair classes, the direction of a slow drift.
HAR_SAMPLES, HAR_AXES, HAR_CLASSES, HAR_HIDDEN = 128, 3, 6, 32
TRAIN, TEST = 1200, 300
_SPLITS: dict[str, tuple[Any, Any, Any, Any]] = {}


def _kws_class() -> Any:
    import torch
    from torch import nn

    class LstmKws(nn.Module):
        """[1, 49, 10] MFCC frames -> nn.LSTM(10, 32) -> the last step's hidden state -> 8 logits."""

        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.LSTM(KWS_COEFFS, KWS_HIDDEN, batch_first=True)
            self.fc = nn.Linear(KWS_HIDDEN, KWS_CLASSES)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out, _ = self.lstm(x)
            return self.fc(out[:, -1])

    return LstmKws


def _har_class() -> Any:
    import torch
    from torch import nn

    class CnnGruHar(nn.Module):
        """[1, 3, 128] accelerometer window -> two strided Conv1d + ReLU (-> 32 steps x 16 features) ->
        nn.GRU(16, 32) -> the last step's hidden state -> 6 logits."""

        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv1d(HAR_AXES, 16, 5, stride=2, padding=2)
            self.conv2 = nn.Conv1d(16, 16, 5, stride=2, padding=2)
            self.gru = nn.GRU(16, HAR_HIDDEN, batch_first=True)
            self.fc = nn.Linear(HAR_HIDDEN, HAR_CLASSES)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.conv1(x))
            x = torch.relu(self.conv2(x))
            out, _ = self.gru(x.transpose(1, 2))
            return self.fc(out[:, -1])

    return CnnGruHar


def _kws_data(n: int, seed: int) -> tuple[Any, Any]:
    import torch

    g = torch.Generator().manual_seed(seed)
    phonemes = torch.randn(6, KWS_COEFFS, generator=torch.Generator().manual_seed(1234)) * 0.8
    y = torch.randint(0, KWS_CLASSES, (n,), generator=g)
    x = torch.randn(n, KWS_FRAMES, KWS_COEFFS, generator=g) * 0.9
    for i in range(n):
        t = int(torch.randint(0, 8, (1,), generator=g))
        for p in KWS_WORDS[int(y[i])]:
            length = int(torch.randint(8, 14, (1,), generator=g))
            x[i, t:t + length] += phonemes[p]
            t += length
    return x, y


def _har_data(n: int, seed: int) -> tuple[Any, Any]:
    import math

    import torch

    g = torch.Generator().manual_seed(seed)
    # (cadence Hz, amplitude g, gravity axis, drift per window): walk, run, sit, stand, stairs up, stairs down
    spec = ((1.8, 0.5, 2, 0.0), (2.8, 1.2, 2, 0.0), (0.0, 0.05, 0, 0.0), (0.0, 0.05, 1, 0.0),
            (1.6, 0.5, 2, 0.3), (1.6, 0.5, 2, -0.3))
    y = torch.randint(0, HAR_CLASSES, (n,), generator=g)
    t = torch.arange(HAR_SAMPLES) / 50.0
    x = torch.randn(n, HAR_AXES, HAR_SAMPLES, generator=g) * 0.6
    for i in range(n):
        hz, amp, axis, drift = spec[int(y[i])]
        hz *= float(0.8 + 0.4 * torch.rand(1, generator=g))
        phase = float(torch.rand(1, generator=g)) * 2 * math.pi
        x[i, axis] += 1.0
        x[i, 2] += amp * torch.sin(2 * math.pi * hz * t + phase)
        x[i, 0] += 0.5 * amp * torch.sin(2 * math.pi * hz * t + phase + 1.0)
        x[i, 1] += drift * (t - t.mean())
    return x, y


@dataclass(frozen=True)
class SequenceModel:
    """One zoo sequence model: its class, its data, its weights file and the float accuracy the tests hold
    the shipped weights to."""

    name: str
    make: Callable[[], Any]
    data: Callable[[int, int], tuple[Any, Any]]
    epochs: int
    min_float_accuracy: float

    @property
    def weights(self) -> Path:
        return WEIGHTS_DIR / f"{self.name}.pt"

    def split(self) -> tuple[Any, Any, Any, Any]:
        """(x_train, x_test, y_train, y_test): fixed seeds, so training, calibration and evaluation agree.
        Generated once per process (a Python loop over 1,500 samples); callers get copies."""
        if self.name not in _SPLITS:
            x_tr, y_tr = self.data(TRAIN, 0)
            x_te, y_te = self.data(TEST, 1)
            _SPLITS[self.name] = (x_tr, x_te, y_tr, y_te)
        return tuple(t.clone() for t in _SPLITS[self.name])

    def untrained(self) -> Any:
        return self.make()()

    def trained(self) -> Any:
        """The model with the shipped weights; a clear error when the file is missing (a broken install)."""
        import torch

        from backend_core.common.errors import BadInputError

        if not self.weights.is_file():
            raise BadInputError(f"The {self.name} weights are missing: {self.weights}",
                                "Train them again: python scripts/train_sequences.py (about a minute), or "
                                "reinstall cortexm-lens (the wheel ships them).")
        model = self.untrained()
        model.load_state_dict(torch.load(self.weights, map_location="cpu", weights_only=True))
        return model.eval()

    def build(self) -> tuple[Any, tuple]:
        """The zoo factory: the trained model and its example input (the first training sample)."""
        x_tr, _, _, _ = self.split()
        return self.trained(), (x_tr[:1].clone(),)

    def calibration_inputs(self) -> list[tuple]:
        x_tr, _, _, _ = self.split()
        return [(x_tr[i:i + 1].clone(),) for i in range(CALIBRATION_SAMPLES)]

    def eval_data(self) -> Iterator[tuple[tuple, int]]:
        """(inputs, label) for every held-out test sample, in split order."""
        _, x_te, _, y_te = self.split()
        for i in range(len(y_te)):
            yield (x_te[i:i + 1].clone(),), int(y_te[i])


MODELS: dict[str, SequenceModel] = {m.name: m for m in (
    SequenceModel("lstm_kws", _kws_class, _kws_data, epochs=20, min_float_accuracy=0.85),
    SequenceModel("cnn_gru_har", _har_class, _har_data, epochs=15, min_float_accuracy=0.85),
)}
