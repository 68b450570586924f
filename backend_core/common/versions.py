"""Versions of the stack, read from package metadata (no heavy imports): what a bug report carries
(`cmlens --version`, `cmlens doctor`) and what every report and history record states."""
from __future__ import annotations

import functools
from importlib import metadata

PACKAGES = ("executorch", "torch", "torchao", "cortexm-lens")
VERSION_PACKAGES = ("cortexm-lens", "torch", "torchao", "executorch")   # the order `--version` prints


def stack_versions() -> dict[str, str]:
    """A copy of the installed versions (read once per process: every report and history record asks)."""
    return dict(_installed_versions())


@functools.lru_cache(maxsize=1)
def _installed_versions() -> tuple[tuple[str, str], ...]:
    out = []
    for p in PACKAGES:
        try:
            out.append((p, metadata.version(p)))
        except metadata.PackageNotFoundError:
            out.append((p, "not installed"))
    return tuple(out)

