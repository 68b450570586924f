"""The zoo's trained sequence models (lstm_kws, cnn_gru_har): the shipped weights meet the training script's
threshold on the held-out split, the data is the same every time (calibration and evaluation agree with
training), and the zoo entries hand the lowering what the digits entry does. Float only: no lowering here."""
from __future__ import annotations

import pytest
import torch

from backend_core.stages.models import load_model, parse_model_source
from backend_core.stages.models.sequences import CALIBRATION_SAMPLES, MODELS, TEST


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shipped_weights_meet_the_threshold_on_held_out_data(name: str) -> None:
    m = MODELS[name]
    _, x_te, _, y_te = m.split()
    with torch.no_grad():
        acc = float((m.trained()(x_te).argmax(1) == y_te).float().mean())
    assert acc >= m.min_float_accuracy, acc
    assert acc < 1.0            # a task the model can get wrong: accuracy after int8 says something


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_zoo_entry_calibrates_on_training_data_and_evaluates_on_the_test_split(name: str) -> None:
    loaded = load_model(parse_model_source(name))
    m = MODELS[name]
    x_tr, x_te, _, y_te = m.split()
    assert isinstance(getattr(loaded.module, "lstm", None) or loaded.module.gru, torch.nn.RNNBase)
    assert torch.equal(loaded.example_inputs[0], x_tr[:1])
    calib = loaded.calibration_inputs
    assert len(calib) == CALIBRATION_SAMPLES and torch.equal(calib[-1][0], x_tr[CALIBRATION_SAMPLES - 1:CALIBRATION_SAMPLES])
    data = list(loaded.eval_data())
    assert len(data) == TEST and torch.equal(data[3][0][0], x_te[3:4]) and data[3][1] == int(y_te[3])
    assert [d.name for d in loaded.dependencies] == [f"weights/{name}.pt"]
    with torch.no_grad():
        assert loaded.module(*loaded.example_inputs).shape == (1, len(set(y_te.tolist())))
