"""Where builds go (the cache directory) and where the kernels/ CMake project and its toolchain file are."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from backend_core.common.kernel_sources import kernels_dir


KERNELS_DIR = kernels_dir()


TOOLCHAIN_FILE = KERNELS_DIR / "cmake" / "arm-none-eabi-gcc.cmake"


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """$CMLENS_CACHE_DIR, else $XDG_CACHE_HOME/cmlens, else ~/.cache/cmlens."""
    env = os.environ if env is None else env
    if env.get("CMLENS_CACHE_DIR"):
        return Path(env["CMLENS_CACHE_DIR"]).expanduser()
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "cmlens"
