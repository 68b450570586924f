"""Where the board layer's C and CMake sources are: `kernels/` beside the packages in a clone (or an
editable install), the package `cortexm_lens_kernels` in an installed wheel (setup.py maps it). Every
target build, the board table and the memory tables read them from here."""
from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def kernels_dir() -> Path:
    clone = Path(__file__).resolve().parents[2] / "kernels"
    if (clone / "boards.json").is_file():
        return clone
    spec = importlib.util.find_spec("cortexm_lens_kernels")
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    raise FileNotFoundError("The board layer's sources (kernels/) are missing from this install: "
                            "reinstall cortexm-lens (pip install --force-reinstall cortexm-lens).")


def kernels_file(*parts: str) -> Path:
    return kernels_dir().joinpath(*parts)
