"""Every lowering of these tests writes into a private cache, never a developer's."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    d = tmp_path_factory.mktemp("cmlens-cache")
    old = os.environ.get("CMLENS_CACHE")
    os.environ["CMLENS_CACHE"] = str(d)         # corpus worker processes inherit it
    yield d
    if old is None:
        os.environ.pop("CMLENS_CACHE", None)
    else:
        os.environ["CMLENS_CACHE"] = old
