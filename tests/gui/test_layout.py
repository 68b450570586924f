"""The main window's layout on a 1366x768 laptop (issue 19): inside the screen, the graph first, folds remembered."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QRect

from app.shell.window_settings import fit_into, initial_geometry
from tests.helpers.gui import lower_and_wait, shown_window, wait_scene


# ---------------------------------------------------------------- the main window's layout (issue 19)


ROOT = Path(__file__).resolve().parents[2]


def test_first_window_and_remembered_window_fit_the_screen() -> None:
    laptop, full_hd = QRect(0, 0, 1366, 738), QRect(0, 0, 1920, 1050)     # minus a 30 px panel
    assert initial_geometry(laptop) == laptop                              # all of a small screen
    big = initial_geometry(full_hd)
    assert full_hd.contains(big) and big.width() >= 1500 and big.center() == full_hd.center()
    # a window remembered on a bigger screen comes back inside the laptop's
    moved = fit_into(QRect(500, 300, 1800, 1000), laptop)
    assert laptop.contains(moved) and moved.size().toTuple() == (1366, 738)
    assert fit_into(QRect(10, 20, 800, 600), laptop) == QRect(10, 20, 800, 600)


@pytest.fixture
def laptop_window(qtbot):
    """A first-run window on a 1366x768 laptop (fresh settings: nothing remembered)."""
    from app.runtime.qt_job import QtJob

    wins = []

    def make():
        win = shown_window(qtbot, (1366, 768))
        qtbot.waitUntil(lambda: win._sized)
        qtbot.wait(50)
        wins.append(win)
        return win
    yield make
    for win in wins:
        win.close()
    qtbot.waitUntil(lambda: not any(w.has_processes() for w in QtJob.instances()), timeout=20_000)


def test_graph_gets_half_the_laptop_window_and_the_legend_starts_folded(qtbot, laptop_window) -> None:
    win = laptop_window()
    assert lower_and_wait(qtbot, win, "layernorm_mlp") == "done"
    wait_scene(qtbot, win)
    share = win.graph.view.height() / win.height()
    assert share >= 0.5, f"graph view {win.graph.view.height()} px of {win.height()}"
    assert win.graph.legend.isVisible() and win.graph.legend.collapsed
    assert win.graph.legend.height() < 30 and win.graph.legend.width() < 140      # a chip, not a third of the graph
    for tab in ("numerics", "target", "memory"):          # tabs with plots do not take the graph's half
        win.show_tab(tab)
        qtbot.wait(50)
        assert win.graph.view.height() / win.height() >= 0.5, tab
    qtbot.mouseClick(win.graph.legend, __import__("PySide6.QtCore", fromlist=["Qt"]).Qt.MouseButton.LeftButton)
    assert not win.graph.legend.collapsed and win.graph.act_legend.isChecked()   # a click unfolds it


def test_folds_and_sizes_are_remembered(qtbot, laptop_window) -> None:
    from PySide6.QtCore import Qt

    win = laptop_window()
    win.resizeDocks([win.bottom_dock], [200], Qt.Orientation.Vertical)
    qtbot.wait(50)
    details = win.bottom_dock.height()
    width = win.inspector_dock.width()
    win.collapsers["InspectorDock"].set_collapsed(True)
    qtbot.waitUntil(lambda: win.inspector_dock.width() <= 30)
    win.graph.act_legend.setChecked(True)
    win.close()                                           # saves geometry, docks, folds, legend

    again = laptop_window()
    qtbot.waitUntil(lambda: again.collapsers["InspectorDock"].collapsed)
    qtbot.waitUntil(lambda: again.inspector_dock.width() <= 30)
    assert abs(again.bottom_dock.height() - details) <= 4
    assert again.graph.act_legend.isChecked() and not again.graph.legend.collapsed
    again.collapsers["InspectorDock"].set_collapsed(False)          # unfolds to the width it had
    qtbot.waitUntil(lambda: abs(again.inspector_dock.width() - width) <= 4)


def _xvfb(size: str):
    """An Xvfb server of `size` on a free display, or None when this machine has none."""
    exe = shutil.which("Xvfb")
    if exe is None:
        return None, None
    for n in range(140, 200):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            proc = subprocess.Popen([exe, f":{n}", "-screen", "0", f"{size}x24", "-nolisten", "tcp"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if Path(f"/tmp/.X11-unix/X{n}").exists():
                    return proc, f":{n}"
                time.sleep(0.05)
            proc.kill()
            proc.wait()
    return None, None


CHILD = r"""
import json, sys
from PySide6.QtCore import QRect, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from app.shell.main_window import MainWindow
def wait(ms):
    t = QTimer(); t.setSingleShot(True); t.timeout.connect(app.quit); t.start(ms); app.exec()
out = {}
win = MainWindow(); win.show(); wait(600)
avail = win.screen().availableGeometry()
out["first"] = [win.frameGeometry().getRect(), avail.getRect(), win.graph.stack.height() / win.height()]
win.setGeometry(QRect(300, 200, 1800, 1000))          # the user made it bigger than this screen
wait(200); win.close(); wait(100)
again = MainWindow(); again.show(); wait(600)
out["again"] = [again.frameGeometry().getRect(), avail.getRect()]
again.close()
print("RESULT " + json.dumps(out))
"""


def test_real_window_opens_inside_a_1366x768_x_screen(tmp_path) -> None:
    """The real xcb window on an X server of a 1366x768 laptop (Xvfb): inside the available geometry with
    the graph given half of it, and again after it was remembered bigger than the screen."""
    from app.shell.display_check import gui_problem

    proc, display = _xvfb("1366x768")
    if proc is None:
        pytest.skip("no Xvfb on this machine (apt-get install xvfb)")
    try:
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", CMLENS_SETTINGS=str(tmp_path / "s.ini"))
        problem = gui_problem(env)
        if problem:
            pytest.skip(problem)
        run = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=120)
        line = next((x for x in run.stdout.splitlines() if x.startswith("RESULT ")), None)
        assert line, run.stderr[-3000:]
        out = json.loads(line[7:])
    finally:
        proc.kill()
        proc.wait()
    (fx, fy, fw, fh), (ax, ay, aw, ah), share = out["first"]
    assert (aw, ah) == (1366, 768)
    assert ax <= fx and ay <= fy and fx + fw <= ax + aw and fy + fh <= ay + ah, out
    assert share >= 0.5, out
    (fx, fy, fw, fh), _ = out["again"]
    assert ax <= fx and ay <= fy and fx + fw <= ax + aw and fy + fh <= ay + ah, out
