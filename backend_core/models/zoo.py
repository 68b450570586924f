"""Built-in models: MLPerf Tiny (ExecuTorch's examples), torchvision MobileNets (random
weights: nothing can be downloaded) and small teaching models that show typical fallbacks."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class ZooEntry:
    name: str
    description: str
    factory: Callable[[], tuple[Any, tuple]]

    def build(self) -> tuple[Any, tuple, list[str]]:
        module, inputs = self.factory()
        notes = ["random weights (no download is possible)"] if "random" in self.description else []
        return module.eval(), inputs, notes


def _mlperf(cls_name: str, shape: tuple[int, ...]) -> Callable[[], tuple[Any, tuple]]:
    def build() -> tuple[Any, tuple]:
        import torch
        from executorch.examples.models import mlperf_tiny

        torch.manual_seed(0)
        model = getattr(mlperf_tiny, cls_name)()
        return model, (torch.rand(*shape) * 2 - 1,)
    return build


def _torchvision(fn_name: str) -> Callable[[], tuple[Any, tuple]]:
    def build() -> tuple[Any, tuple]:
        import torch
        import torchvision

        torch.manual_seed(0)
        model = getattr(torchvision.models, fn_name)(weights=None)
        return model, (torch.randn(1, 3, 224, 224),)
    return build


def _teaching(cls_name: str) -> Callable[[], tuple[Any, tuple]]:
    def build() -> tuple[Any, tuple]:
        from . import teaching

        return teaching.build(cls_name)
    return build


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
    ZooEntry("layernorm_mlp", "teaching: Linear -> LayerNorm -> ReLU -> Linear; LayerNorm stays float "
             "and the ReLU after it cannot be fused", _teaching("LayerNormMLP")),
    ZooEntry("softmax_channels", "teaching: conv then softmax over the channel dim, which the "
             "quantizer rejects", _teaching("SoftmaxOverChannels")),
    ZooEntry("maxpool_ceil", "teaching: conv + max_pool2d(ceil_mode=True), which stays on a "
             "portable int8 kernel", _teaching("MaxPoolCeil")),
]}


def zoo_names() -> list[str]:
    return list(ZOO)
