"""The real-world sample (issue 26): timm models from bench/realworld_models.py, random weights,
1x3x96x96 channels-last. Each test module lowers its model once (module-scoped fixtures)."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "bench" / "realworld_models.py"
CALIB = 2          # calibration samples: the failures are about layout and dtype, not ranges

pytest.importorskip("timm", reason="timm is in constraints.txt: pip install -c constraints.txt timm")

# Minutes of both cores each (several lowerings of an 800-1,900-node model, or a delta-debugging run of
# dozens of lowerings): kept out of `make test`, which holds the failure diagnosis of ghostnet_050, the
# small fixtures with the same patterns, and lcnet_050; CMLENS_TEST_REALWORLD=1 runs them (the old name
# CMLENS_REALWORLD_ALL is still read).
ALL = bool(os.environ.get("CMLENS_TEST_REALWORLD") or os.environ.get("CMLENS_REALWORLD_ALL"))
opt_in = pytest.mark.skipif(not ALL, reason="opt-in (minutes): set CMLENS_TEST_REALWORLD=1; bench/realworld.py "
                                           "covers the corpus")

# The second wave (issue 38): transformers, ultralytics, segmentation-models-pytorch, pytorchcv, installed
# outside the venv (`pip install --no-deps --target DIR`, then PYTHONPATH=DIR); a model whose library is
# not importable is skipped with that reason.
MODELS2 = ROOT / "bench" / "realworld_models2.py"
# The third wave (issue 46): braindecode, pytorch-tcn, MONAI, torchaudio, speechbrain and two RNNs of our own.
MODELS3 = ROOT / "bench" / "realworld_models3.py"


def source(name: str) -> str:
    return f"{MODELS}:{name}"


def source2(name: str) -> str:
    return f"{MODELS2}:{name}"


def source3(name: str) -> str:
    return f"{MODELS3}:{name}"


def needs_library(module: str) -> pytest.MarkDecorator:
    """Skip unless `module` imports (the real model libraries are not in the venv)."""
    found = importlib.util.find_spec(module) is not None
    return pytest.mark.skipif(not found, reason=f"needs {module}: pip install --no-deps --target DIR "
                              f"(bench/realworld_models2.py and 3 say which), then PYTHONPATH=DIR")


def bench_module() -> ModuleType:
    """bench/realworld.py (its plain-ExecuTorch side is what the same-fallbacks test compares with)."""
    spec = importlib.util.spec_from_file_location("realworld_bench", ROOT / "bench" / "realworld.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
