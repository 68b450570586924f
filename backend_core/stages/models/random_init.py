"""A documented initialisation for zoo models that have no pretrained weights here (nothing can be
downloaded), so their activations are not degenerate.

Why: torchvision's MobileNetV2/V3 init (kaiming_normal with mode="fan_out" on every conv, depthwise
included, and N(0, 0.01) classifier weights) shrinks the signal block after block while the fresh
BatchNorm statistics (mean 0, var 1) undo nothing in eval mode: MobileNetV2 output ~3e-9, all 1,000
outputs 0.0 on the target, and `Test_result: PASS` proved nothing (issue 9, item 7). So:
1. Linear layers get PyTorch's default init (`reset_parameters()`: kaiming-uniform, a=sqrt(5));
2. BatchNorm running statistics are recomputed on random inputs of the model's input distribution
   (train mode, cumulative average, no gradient), then the model goes back to eval.
Measured (seed 0/1, batch of 4): MobileNetV2 max|y| 3.4e-9 -> 0.90 (std 0.26); MobileNetV3-Small
2.1e-9 -> 0.21 (std 0.05). The MLPerf Tiny models are left as they are: their outputs are already
0.04-0.15 at most (ds_cnn 0.12, resnet8 0.10, mobilenet_v1_025 0.04, deep_autoencoder 0.15)."""
from __future__ import annotations

from typing import Any, Callable


def calibrate_random_weights(model: Any, sample: Callable[[], Any], batches: int = 1) -> Any:
    """Re-initialise Linear layers and recompute BatchNorm statistics on `sample()` batches; eval mode."""
    import torch
    from torch.nn.modules.batchnorm import _BatchNorm

    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            m.reset_parameters()
    norms = [m for m in model.modules() if isinstance(m, _BatchNorm)]
    momenta = [bn.momentum for bn in norms]
    for bn in norms:
        bn.reset_running_stats()
        bn.momentum = None                     # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(sample())
    for bn, mom in zip(norms, momenta):
        bn.momentum = mom
    return model.eval()
