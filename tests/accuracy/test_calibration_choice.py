"""Which samples calibrate: a model's own (a trained zoo entry's training images, a file's
get_calibration_inputs()) by default; an explicit `--calib N` (N >= 1) means N random samples instead, so
`cmlens evaluate digits_cnn --calib 1` shows what a poor calibration costs."""
from __future__ import annotations

import torch

from backend_core.stages.models.calibration import calibration_set


def test_an_explicit_count_overrides_the_models_own_samples() -> None:
    ex = (torch.zeros(1, 4),)
    own = [(torch.ones(1, 4),), (2 * torch.ones(1, 4),)]
    assert [s[0].sum().item() for s in calibration_set(ex, None, own)] == [0.0, 4.0, 8.0]
    assert [s[0].sum().item() for s in calibration_set(ex, 0, own)] == [0.0, 4.0, 8.0]   # 0: the GUI's "default"
    one = calibration_set(ex, 1, own)
    assert len(one) == 2 and one[0] is ex and not any(torch.equal(one[1][0], o[0]) for o in own)
    assert len(calibration_set(ex, "3", own)) == 4
    assert len(calibration_set(ex, None, None)) == 9                                     # default: 8 random


def test_the_digits_entry_calibrates_on_training_images_only() -> None:
    from backend_core.analyses.accuracy.data import sample_digest
    from backend_core.stages.models import load_model, parse_model_source

    m = load_model(parse_model_source("digits_cnn"))
    calib = {sample_digest(s) for s in calibration_set(m.example_inputs, None, m.calibration_inputs)}
    assert len(calib) == 64            # the example input is the first training image, also among the 64
    test = {sample_digest(x) for x, _ in m.eval_data()}
    assert len(test) >= 440 and not calib & test
