"""Driving the main window in tests: lower a model and wait, wait for a stage's graph on screen."""
from __future__ import annotations

LOWER_TIMEOUT_MS = 240_000           # a cold ds_cnn on a loaded 2-core machine


def shown_window(qtbot, size: tuple[int, int] = (1400, 900)):
    """The main window as a user opens it: made, sized, shown and exposed (qtbot closes it at the end)."""
    from app.shell.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    return win


def close_window(qtbot, win) -> None:
    """Close `win` and let the event loop reap every job worker it started (a killed one too)."""
    from app.runtime.qt_job import QtJob

    win.close()
    qtbot.waitUntil(lambda: not any(w.has_processes() for w in QtJob.instances()), timeout=20_000)


def lower_and_wait(qtbot, win, model: str, **kw) -> str:
    """Lower `model` in `win` and wait until the session finishes; returns the status."""
    with qtbot.waitSignal(win.session.finished, timeout=LOWER_TIMEOUT_MS) as blocker:
        win.open_model(model, **kw)
    return blocker.args[0]


def wait_scene(qtbot, win, stage: int | None = None) -> None:
    """Wait until the main graph view shows `stage` (default: the current stage)."""
    qtbot.waitUntil(lambda: win.graph.is_showing(win.state.stage if stage is None else stage),
                    timeout=60_000)
