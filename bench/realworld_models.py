"""Small timm models as cmlens model files (issue 26's real-world corpus): random weights, eval,
1x3x96x96 channels-last inputs. Use as `cmlens lower bench/realworld_models.py:ghostnet_050`; any
timm model name works as NAME (module __getattr__), the corpus list is CORPUS."""
from __future__ import annotations

from typing import Any, Callable

SIZE = 96
CORPUS = ("mobilenetv3_small_050", "ghostnet_050", "efficientvit_m0", "lcnet_050", "mnasnet_small",
          "tinynet_e", "regnetx_002", "resnet10t", "efficientnet_lite0", "semnasnet_050",
          "mobileone_s0", "repghostnet_050")


def build(name: str, size: int = SIZE) -> tuple[Any, tuple]:
    """(model, example inputs): seeded random weights, so every process lowers the same numbers."""
    import timm
    import torch

    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False).eval()
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(1))
    return model, (x.to(memory_format=torch.channels_last),)


def __getattr__(name: str) -> Callable[[], tuple[Any, tuple]]:
    if name.startswith("__"):
        raise AttributeError(name)
    return lambda: build(name)
