"""Tests of the "Run on target" panel: pytest-qt, offscreen, real `cmlens` child processes.
After every test no panel process may be left running (tests/conftest.py)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Own QSettings file, and no checkout from the environment unless a test sets one."""
    monkeypatch.setenv("CMLENS_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    monkeypatch.delenv("CMSIS_NN_PATH", raising=False)
    yield


@pytest.fixture(autouse=True)
def _no_leftovers(no_leftover_processes) -> Iterator[None]:
    """tests/conftest.py's no_leftover_processes after every panel test."""
    yield


@pytest.fixture
def panel(qtbot):
    from app.firmware.panel import TargetPanel

    p = TargetPanel()
    qtbot.addWidget(p)
    p.resize(900, 700)
    p.show()
    yield p
    p.shutdown()
    qtbot.waitUntil(lambda: not p.is_busy(), timeout=10_000)
