"""GUI tests: pytest-qt, offscreen, the real worker process and the real pipeline.

Lowering results are cached in the run's one cache directory (tests/conftest.py: shared by both xdist
workers, so the first test anywhere that needs a model lowers it cold); tests that need a cold run
point CMLENS_CACHE at their own tmp_path.
After every test, no worker process and no background QThread may be left running
(tests/conftest.py: no_leftover_processes).
"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path
from typing import Iterator

import pytest

from tests.helpers.gui import LOWER_TIMEOUT_MS, close_window, lower_and_wait, shown_window, wait_scene  # noqa: F401


@pytest.fixture(scope="session")
def gui_cache(private_cache: Path) -> Path:
    return private_cache


@pytest.fixture(autouse=True)
def gui_env(gui_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CMLENS_CACHE", str(gui_cache))
    monkeypatch.setenv("CMLENS_SETTINGS", str(tmp_path / "settings.ini"))
    yield


@pytest.fixture(autouse=True)
def _no_leftovers(no_leftover_processes) -> Iterator[None]:
    """tests/conftest.py's no_leftover_processes after every GUI test."""
    yield


@pytest.fixture
def window(qtbot):
    win = shown_window(qtbot, (1400, 900))
    yield win
    close_window(qtbot, win)     # a killed worker is reaped by the event loop: every process gone
