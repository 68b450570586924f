"""Built-in models: MLPerf Tiny (ExecuTorch's examples), torchvision MobileNets (random
weights: nothing can be downloaded) and small teaching models that show typical fallbacks."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from backend_core.stages.models.random_init import calibrate_random_weights


@dataclass(frozen=True)
class ZooEntry:
    name: str
    description: str
    factory: Callable[[], tuple[Any, tuple]]
    # trained entries only: their calibration samples (training split), labelled evaluation data
    # (held-out split, yields (inputs, label)) and the weights file (recorded for the result cache)
    calibration: Callable[[], list[tuple]] | None = None
    eval_data: Callable[[], Any] | None = None
    weights: str = ""

    def build(self) -> tuple[Any, tuple, list[str]]:
        module, inputs = self.factory()
        notes = ["random weights (no download is possible)"] if "random" in self.description else []
        return module.eval(), inputs, notes


def explicit_flow_inputs(inputs: tuple) -> tuple:
    """The zoo's inputs for the explicit-layout flow: NCHW (contiguous), which that flow takes,
    as ExecuTorch's test_explicit_layout_pipeline.py feeds it."""
    import torch

    # clone(), not contiguous(): a 1-channel channels-last tensor already counts as contiguous
    # and would keep its NHWC strides.
    return tuple(x.clone(memory_format=torch.contiguous_format) if isinstance(x, torch.Tensor) else x
                 for x in inputs)


def _as_fed(x: Any) -> Any:
    """Image inputs channels-last, as ExecuTorch's own Cortex-M model tests feed these models
    (backends/cortex_m/test/models/test_ds_cnn.py etc.): the legacy flow's CMSIS-NN kernels are
    NHWC. The input is part of the zoo entry; the pipeline itself never converts a layout."""
    import torch

    return x.to(memory_format=torch.channels_last) if x.dim() == 4 else x


def _mlperf(cls_name: str, shape: tuple[int, ...]) -> Callable[[], tuple[Any, tuple]]:
    def build() -> tuple[Any, tuple]:
        import torch
        from executorch.examples.models import mlperf_tiny

        torch.manual_seed(0)
        model = getattr(mlperf_tiny, cls_name)()
        return model, (_as_fed(torch.rand(*shape) * 2 - 1),)
    return build


def _torchvision(fn_name: str) -> Callable[[], tuple[Any, tuple]]:
    def build() -> tuple[Any, tuple]:
        import torch
        import torchvision

        torch.manual_seed(0)
        model = getattr(torchvision.models, fn_name)(weights=None)
        x = torch.randn(1, 3, 224, 224)
        g = torch.Generator().manual_seed(1)      # random weights: a documented init, see random_init.py
        calibrate_random_weights(model, lambda: torch.randn(4, 3, 224, 224, generator=g))
        return model, (_as_fed(x),)
    return build


def _teaching(cls_name: str) -> Callable[[], tuple[Any, tuple]]:
    def build() -> tuple[Any, tuple]:
        from backend_core.stages.models import teaching

        return teaching.build(cls_name)
    return build


def _sequence(name: str, attr: str) -> Callable[..., Any]:
    def call() -> Any:
        from backend_core.stages.models.sequences import MODELS

        return getattr(MODELS[name], attr)()
    return call


def _digits(fn_name: str) -> Callable[..., Any]:
    def call() -> Any:
        from backend_core.stages.models import digits

        return getattr(digits, fn_name)()
    return call


ZOO: dict[str, ZooEntry] = {e.name: e for e in [
    ZooEntry("ds_cnn", "MLPerf Tiny keyword spotting DS-CNN (1x1x49x10), random weights",
             _mlperf("DSCNNKWS", (1, 1, 49, 10))),
    ZooEntry("resnet8", "MLPerf Tiny image classification ResNet-8 (1x3x32x32), random weights",
             _mlperf("ResNet8", (1, 3, 32, 32))),
    ZooEntry("mobilenet_v1_025", "MLPerf Tiny visual wake words MobileNetV1 0.25 (1x3x96x96), random weights",
             _mlperf("MobileNetV1025", (1, 3, 96, 96))),
    ZooEntry("deep_autoencoder", "MLPerf Tiny anomaly detection deep autoencoder (1x640), random weights",
             _mlperf("DeepAutoEncoder", (1, 640))),
    ZooEntry("mv2", "torchvision MobileNetV2 (1x3x224x224), random weights", _torchvision("mobilenet_v2")),
    ZooEntry("mv3", "torchvision MobileNetV3-Small (1x3x224x224), random weights",
             _torchvision("mobilenet_v3_small")),
    ZooEntry("digits_cnn", "trained 8x8 handwritten-digit CNN (1x1x8x8; scikit-learn's bundled digits, "
             "97.3 % float test accuracy; scripts/train_digits.py)", _digits("build"),
             calibration=_digits("calibration_inputs"), eval_data=_digits("get_eval_data"),
             weights="weights/digits_cnn.pt"),
    ZooEntry("lstm_kws", "trained LSTM keyword spotter (1x49x10 MFCC frames -> nn.LSTM(10, 32) -> 8 keywords; "
             "a synthetic keyword task, 98.3 % float test accuracy; scripts/train_sequences.py)",
             _sequence("lstm_kws", "build"), calibration=_sequence("lstm_kws", "calibration_inputs"),
             eval_data=_sequence("lstm_kws", "eval_data"), weights="weights/lstm_kws.pt"),
    ZooEntry("cnn_gru_har", "trained CNN + GRU activity recogniser (1x3x128 accelerometer window -> 2 Conv1d -> "
             "nn.GRU(16, 32) -> 6 activities; a synthetic activity task, 96.7 % float test accuracy; "
             "scripts/train_sequences.py)", _sequence("cnn_gru_har", "build"),
             calibration=_sequence("cnn_gru_har", "calibration_inputs"),
             eval_data=_sequence("cnn_gru_har", "eval_data"), weights="weights/cnn_gru_har.pt"),
    ZooEntry("layernorm_mlp", "teaching: Linear -> LayerNorm -> ReLU -> Linear; LayerNorm stays float "
             "and the ReLU after it cannot be fused", _teaching("LayerNormMLP")),
    ZooEntry("softmax_channels", "teaching: conv then softmax over the channel dim, which the "
             "quantizer rejects", _teaching("SoftmaxOverChannels")),
    ZooEntry("maxpool_ceil", "teaching: conv + max_pool2d(ceil_mode=True), which stays on a "
             "portable int8 kernel", _teaching("MaxPoolCeil")),
]}


def zoo_names() -> list[str]:
    return list(ZOO)
