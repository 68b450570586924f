"""Versions of the stack, read from package metadata (no heavy imports)."""
from __future__ import annotations

from importlib import metadata

PACKAGES = ("executorch", "torch", "torchao", "cortexm-lens")


def stack_versions() -> dict[str, str]:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out
