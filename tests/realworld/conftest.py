"""The real-world sample (issue 26): timm models from bench/realworld_models.py, random weights,
1x3x96x96 channels-last. Each test module lowers its model once (module-scoped fixtures)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "bench" / "realworld_models.py"
CALIB = 2          # calibration samples: the failures are about layout and dtype, not ranges

pytest.importorskip("timm", reason="timm is in constraints.txt: pip install -c constraints.txt timm")


def source(name: str) -> str:
    return f"{MODELS}:{name}"


def bench_module() -> ModuleType:
    """bench/realworld.py (its plain-ExecuTorch side is what the same-fallbacks test compares with)."""
    spec = importlib.util.spec_from_file_location("realworld_bench", ROOT / "bench" / "realworld.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
