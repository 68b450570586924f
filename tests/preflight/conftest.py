"""Pre-flight tests lower with the real ExecuTorch pipeline into a private cache."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cmlens-cache")
    old = os.environ.get("CMLENS_CACHE")
    os.environ["CMLENS_CACHE"] = str(d)
    yield d
    if old is None:
        os.environ.pop("CMLENS_CACHE", None)
    else:
        os.environ["CMLENS_CACHE"] = old
