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

from tests.helpers.gui import LOWER_TIMEOUT_MS, lower_and_wait, wait_scene  # noqa: F401


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
    from app.shell.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()
    from app.runtime.qt_job import QtJob

    # a killed worker is reaped by the event loop: let it run until every process is gone
    qtbot.waitUntil(lambda: not any(w.has_processes() for w in QtJob.instances()), timeout=20_000)
