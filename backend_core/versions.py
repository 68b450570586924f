"""Versions of the stack, read from package metadata (no heavy imports): what a bug report carries
(`cmlens --version`, `cmlens doctor`) and what every report and history record states."""
from __future__ import annotations

from importlib import metadata

PACKAGES = ("executorch", "torch", "torchao", "cortexm-lens")
VERSION_PACKAGES = ("cortexm-lens", "torch", "torchao", "executorch")   # the order `--version` prints


def stack_versions() -> dict[str, str]:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out

