"""Artefacts made once per session with plain ExecuTorch APIs (plain_flow.py), a private cache, and
the project's own lowering of the same models to compare with."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from .plain_flow import PlainArtefacts, make_artefacts

_MADE: dict[str, PlainArtefacts] = {}


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


@pytest.fixture(scope="session")
def plain(tmp_path_factory: pytest.TempPathFactory):
    """plain(zoo_name) -> PlainArtefacts (.pte, .bpte, .etrecord made by ExecuTorch's own APIs)."""
    pytest.importorskip("executorch")
    root = tmp_path_factory.mktemp("plain")

    def get(name: str) -> PlainArtefacts:
        if name not in _MADE:
            _MADE[name] = make_artefacts(name, root / name)
        return _MADE[name]
    return get
