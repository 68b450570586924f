"""torchvision's MobileNetV2 (the library's own code, random weights), width 0.35, 10 classes, at 176×176,
channels-last as the zoo's CNNs (CMSIS-NN's layout): ExecuTorch's plan needs the float input (363 KiB)
beside its int8 copy, more than nrf5340's 512 KiB SRAM with the runtime; a 2×2 patch schedule with an int8
input fits it and PASSes on QEMU linked into nrf5340's sizes (README "Make it fit": measured by hand, no
test runs it yet)."""
import torch


def get_model() -> torch.nn.Module:
    from torchvision.models import mobilenet_v2

    torch.manual_seed(0)
    return mobilenet_v2(weights=None, width_mult=0.35, num_classes=10).eval().to(memory_format=torch.channels_last)


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 3, 176, 176).to(memory_format=torch.channels_last),)
