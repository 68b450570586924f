"""GUI tests: pytest-qt, offscreen, the real worker process and the real pipeline.

Lowering results are cached in one session-wide cache directory (the first test that needs a
model lowers it cold); tests that need a cold run point CMLENS_CACHE at their own tmp_path.
After every test, no worker process and no background QThread may be left running.
"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402
from typing import Iterator  # noqa: E402

import pytest  # noqa: E402

LOWER_TIMEOUT_MS = 240_000           # a cold ds_cnn on a loaded 2-core machine


def running_target_processes() -> list:
    """The Run-on-target panel's live `cmlens` children (a panel whose window was deleted has
    none: its QProcess went with it)."""
    from app.runtime.cli_process import CliProcess

    out = []
    for p in list(CliProcess._instances):
        try:
            if p.is_running():
                out.append(p)
        except RuntimeError:             # the C++ QProcess is already deleted
            pass
    return out


@pytest.fixture(scope="session")
def gui_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cmlens-gui-cache")


@pytest.fixture(autouse=True)
def gui_env(gui_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CMLENS_CACHE", str(gui_cache))
    monkeypatch.setenv("CMLENS_SETTINGS", str(tmp_path / "settings.ini"))
    yield


@pytest.fixture(autouse=True)
def no_dangling(qapp) -> Iterator[None]:
    """Like napari's _dangling_qthreads: fail a test that leaves threads or processes behind."""
    from app.runtime.background import BackgroundRunner
    from app.runtime.worker_client import WorkerClient

    yield
    running = [r for r in BackgroundRunner.instances() if r.is_running()]
    procs = [w for w in WorkerClient.instances() if w.has_processes()]
    clis = running_target_processes()
    for r in running:
        r.shutdown()
    for w in procs:
        w.cancel()
    for c in clis:
        c.kill()
    assert not running, f"{len(running)} background QThread(s) left running"
    assert not procs, f"{len(procs)} worker process(es) left running"
    assert not clis, f"{len(clis)} cmlens target process(es) left running"


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
    from app.runtime.worker_client import WorkerClient

    # a killed worker is reaped by the event loop: let it run until every process is gone
    qtbot.waitUntil(lambda: not any(w.has_processes() for w in WorkerClient.instances())
                    and not running_target_processes(), timeout=20_000)


def lower_and_wait(qtbot, win, model: str, **kw) -> str:
    """Lower `model` in `win` and wait until the session finishes; returns the status."""
    with qtbot.waitSignal(win.session.finished, timeout=LOWER_TIMEOUT_MS) as blocker:
        win.open_model(model, **kw)
    return blocker.args[0]


def wait_scene(qtbot, win, stage: int | None = None) -> None:
    """Wait until the main graph view shows `stage` (default: the current stage)."""
    qtbot.waitUntil(lambda: win.graph.is_showing(win.state.stage if stage is None else stage),
                    timeout=60_000)
