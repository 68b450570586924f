"""The second real-world wave (issue 38): model code nobody here wrote, of kinds the timm set lacks —
Hugging Face `transformers` encoders and an audio classifier built from config objects, an `ultralytics`
YOLO detector and its segmentation variant from their yaml, `segmentation-models-pytorch` U-Net / FPN /
DeepLabV3+, `pytorchcv` CNN families and timm's `mobileone_s0`. Random seeded weights, no downloads, all
< 5 M parameters and inputs <= 128x128. Use as `cmlens lower bench/realworld_models2.py:distilbert_eager`.

The libraries are not in the venv: install them into a folder outside it and put that on PYTHONPATH:
  pip install --no-deps --target DIR -c constraints.txt transformers==5.23.* pytorchcv==0.0.74 \
      segmentation-models-pytorch==0.6.0 efficientnet-pytorch ultralytics==8.4.* opencv-python-headless \
      ultralytics-thop
  PYTHONPATH=DIR HF_HUB_OFFLINE=1 YOLO_OFFLINE=1 cmlens lower bench/realworld_models2.py:vit_eager
"""
from __future__ import annotations

import os
from typing import Any, Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")

# name -> the library it needs (tests skip a model whose library is not importable)
CORPUS = {
    "distilbert_eager": "transformers", "distilbert_sdpa": "transformers",
    "vit_eager": "transformers", "vit_sdpa": "transformers",
    "ast_audio": "transformers",
    "yolo_det": "ultralytics", "yolo_seg": "ultralytics",
    "unet": "segmentation_models_pytorch", "fpn": "segmentation_models_pytorch",
    "deeplabv3plus": "segmentation_models_pytorch",
    "densenet40": "pytorchcv", "sinet": "pytorchcv", "fastscnn": "pytorchcv", "cgnet": "pytorchcv",
    "efficientnet_b0": "efficientnet_pytorch", "mobileone_s0": "timm",
}


def _seed() -> Any:
    import torch

    torch.manual_seed(0)
    return torch


def _image(size: int, channels_last: bool = True) -> tuple:
    import torch

    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))
    return (x.to(memory_format=torch.channels_last) if channels_last else x,)


class _FirstOutput:
    """Wraps a Hugging Face model so export sees one tensor out (its ModelOutput is a dict)."""

    @staticmethod
    def wrap(model: Any, key: str) -> Any:
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return getattr(self.model(x), key)

        return Wrapped().eval()


def _distilbert(attn: str | None) -> tuple[Any, tuple]:
    torch = _seed()
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(vocab_size=1000, dim=64, n_layers=2, n_heads=2, hidden_dim=128,
                           max_position_embeddings=64)
    kw = {"attn_implementation": attn} if attn else {}
    model = DistilBertModel(cfg, **kw) if not kw else DistilBertModel._from_config(cfg, **kw)
    ids = torch.randint(0, 1000, (1, 16), generator=torch.Generator().manual_seed(1))
    return _FirstOutput.wrap(model.eval(), "last_hidden_state"), (ids,)


def _vit(attn: str | None) -> tuple[Any, tuple]:
    _seed()
    from transformers import ViTConfig, ViTForImageClassification

    cfg = ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=128, num_labels=10)
    kw = {"attn_implementation": attn} if attn else {}
    model = ViTForImageClassification._from_config(cfg, **kw)
    return _FirstOutput.wrap(model.eval(), "logits"), _image(32)


def distilbert_eager() -> tuple[Any, tuple]:
    """A 2-layer DistilBERT-style encoder with eager attention (ExecuTorch's scalar pass fails on its bmm)."""
    return _distilbert("eager")


def distilbert_sdpa() -> tuple[Any, tuple]:
    return _distilbert(None)


def vit_eager() -> tuple[Any, tuple]:
    return _vit("eager")


def vit_sdpa() -> tuple[Any, tuple]:
    return _vit(None)


def ast_audio() -> tuple[Any, tuple]:
    """An Audio Spectrogram Transformer classifier on a 64-frame x 32-mel spectrogram."""
    torch = _seed()
    from transformers import ASTConfig, ASTForAudioClassification

    cfg = ASTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                    max_length=64, num_mel_bins=32, patch_size=16, frequency_stride=16, time_stride=16,
                    num_labels=12)
    model = ASTForAudioClassification(cfg)
    x = torch.randn(1, 64, 32, generator=torch.Generator().manual_seed(1))
    return _FirstOutput.wrap(model.eval(), "logits"), (x,)


def _yolo_cfg(yaml_name: str) -> dict:
    from ultralytics.nn.tasks import yaml_model_load

    cfg = yaml_model_load(yaml_name)
    cfg["scale"] = "n"
    cfg["scales"] = {"n": [0.33, 0.125, 256]}      # a tiny width: ~0.3 M parameters
    return cfg


def yolo_det() -> tuple[Any, tuple]:
    """An ultralytics YOLOv8 detector from its yaml (tiny width, 2 classes), 64x64 input."""
    _seed()
    from ultralytics.nn.tasks import DetectionModel

    model = DetectionModel(_yolo_cfg("yolov8n.yaml"), ch=3, nc=2, verbose=False).eval()
    model.model[-1].export = True          # what ultralytics' own exporter sets: one tensor out
    return model, _image(64)


def yolo_seg() -> tuple[Any, tuple]:
    _seed()
    from ultralytics.nn.tasks import SegmentationModel

    model = SegmentationModel(_yolo_cfg("yolov8n-seg.yaml"), ch=3, nc=2, verbose=False).eval()
    model.model[-1].export = True          # (detections with mask coefficients, prototypes)
    return model, _image(64)


def _smp(arch: str, **kw: Any) -> tuple[Any, tuple]:
    _seed()
    import segmentation_models_pytorch as smp

    model = getattr(smp, arch)(encoder_name="mobilenet_v2", encoder_weights=None, classes=3, **kw).eval()
    return model, _image(64)


def unet() -> tuple[Any, tuple]:
    return _smp("Unet", decoder_channels=(64, 32, 16, 8, 8))


def fpn() -> tuple[Any, tuple]:
    return _smp("FPN", decoder_pyramid_channels=64, decoder_segmentation_channels=32)


def deeplabv3plus() -> tuple[Any, tuple]:
    """DeepLabV3+ (dilated convolutions in its ASPP)."""
    return _smp("DeepLabV3Plus", decoder_channels=64)


def _pytorchcv(name: str, size: int, **kw: Any) -> tuple[Any, tuple]:
    _seed()
    from pytorchcv.model_provider import get_model

    model = get_model(name, pretrained=False, **kw).eval()
    return model, _image(size)


def densenet40() -> tuple[Any, tuple]:
    return _pytorchcv("densenet40_k12_cifar10", 32)


def sinet() -> tuple[Any, tuple]:
    return _pytorchcv("sinet_cityscapes", 128, in_size=(128, 128), num_classes=4)


def fastscnn() -> tuple[Any, tuple]:
    return _pytorchcv("fastscnn_cityscapes", 128, in_size=(128, 128), num_classes=4, aux=False,
                      fixed_size=True)


def cgnet() -> tuple[Any, tuple]:
    """CGNet (dilated convolutions in its context-guided blocks)."""
    return _pytorchcv("cgnet_cityscapes", 64, in_size=(64, 64), num_classes=4)


def efficientnet_b0() -> tuple[Any, tuple]:
    _seed()
    from efficientnet_pytorch import EfficientNet

    model = EfficientNet.from_name("efficientnet-b0", num_classes=10)
    model.set_swish(memory_efficient=False)
    return model.eval(), _image(64)


def mobileone_s0() -> tuple[Any, tuple]:
    _seed()
    import timm

    return timm.create_model("mobileone_s0", pretrained=False, num_classes=10).eval(), _image(96)


def build(name: str) -> tuple[Any, tuple]:
    fn: Callable[[], tuple[Any, tuple]] = globals()[name]
    return fn()
