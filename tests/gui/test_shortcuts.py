"""The keyboard, on the real window with a real lowering of layernorm_mlp (2 portable fallbacks): passes,
fallbacks both ways, the search box, fit, the Details tabs, folding the Details dock, and Help > Keyboard
shortcuts, which lists what the keys do and matches the README's table."""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.helpers.gui import lower_and_wait, wait_scene

README = Path(__file__).resolve().parents[2] / "README.md"
CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def key(qtbot, win, k, mod=Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.keyClick(win, k, mod)
    QApplication.processEvents()


def test_shortcuts_drive_the_window(qtbot, window) -> None:
    win = window
    assert lower_and_wait(qtbot, win, "layernorm_mlp") == "done"
    wait_scene(qtbot, win)
    win.activateWindow()
    win.graph.view.setFocus()
    final = win.session.final().index
    fbs = [n.id for n in win.session.final().nodes if n.kind == "portable_fallback"]
    assert len(fbs) == 2

    # passes: Left / Right, Home / End
    key(qtbot, win, Qt.Key.Key_Left)
    assert win.state.stage == final - 1
    key(qtbot, win, Qt.Key.Key_Right)
    assert win.state.stage == final
    key(qtbot, win, Qt.Key.Key_Home)
    assert win.state.stage == 0
    key(qtbot, win, Qt.Key.Key_End)
    assert win.state.stage == final

    # fallbacks: F3 forward, Shift+F3 back (wrapping)
    key(qtbot, win, Qt.Key.Key_F3)
    assert win.state.selected == fbs[0]
    key(qtbot, win, Qt.Key.Key_F3)
    assert win.state.selected == fbs[1]
    key(qtbot, win, Qt.Key.Key_F3, SHIFT)
    assert win.state.selected == fbs[0]
    key(qtbot, win, Qt.Key.Key_F3, SHIFT)
    assert win.state.selected == fbs[1]

    # fit: zoom in with +, F fits again
    wait_scene(qtbot, win)
    win.fallbacks.setFocus()
    key(qtbot, win, Qt.Key.Key_F)
    fitted = win.graph.view.transform().m11()
    key(qtbot, win, Qt.Key.Key_Plus)
    key(qtbot, win, Qt.Key.Key_Plus)
    assert win.graph.view.transform().m11() > fitted * 1.4
    key(qtbot, win, Qt.Key.Key_F)
    assert abs(win.graph.view.transform().m11() - fitted) < 1e-6

    # the Details tabs: Ctrl+1..7 in tab order
    for k, name in ((4, "Numerics"), (6, "Memory"), (5, "Run on target"), (1, "Fallbacks")):
        key(qtbot, win, getattr(Qt.Key, f"Key_{k}"), CTRL)
        assert win.tabs.tabText(win.tabs.currentIndex()) == name

    # Ctrl+J folds the Details dock to its tabs (the graph grows), and unfolds it to the same height
    before, graph_before = win.bottom_dock.height(), win.graph.view.height()
    key(qtbot, win, Qt.Key.Key_J, CTRL)
    qtbot.waitUntil(lambda: win.bottom_dock.height() < 60)
    assert win.collapsers["DetailsDock"].collapsed and win.graph.view.height() > graph_before + 100
    key(qtbot, win, Qt.Key.Key_J, CTRL)
    qtbot.waitUntil(lambda: abs(win.bottom_dock.height() - before) <= 4)

    # Ctrl+F: the cursor goes to the search box (typing there does not trigger F, Q, W...)
    key(qtbot, win, Qt.Key.Key_F, CTRL)
    assert QApplication.focusWidget() is win.graph.search
    stage = win.state.stage
    qtbot.keyClicks(win.graph.search, "layer")
    assert win.graph.search.text() == "layer" and win.state.stage == stage and not win.state.compare

    # F1: the list of shortcuts, made from the actions themselves
    key(qtbot, win, Qt.Key.Key_F1)
    dlg = win.shortcuts_dialog
    assert dlg.isVisible()
    listed = {k for _g, _w, k in dlg.rows}
    assert {"Left", "Right", "F3", "Shift+F3", "Ctrl+F", "F", "Ctrl+1", "Ctrl+J", "F1"} <= listed
    dlg.close()


def test_readme_lists_every_shortcut(window) -> None:
    """The README's keyboard table names every key Help > Keyboard shortcuts lists."""
    from app.shell.shortcuts import shortcut_rows

    text = README.read_text()
    section = text[text.index("### Keyboard shortcuts"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    keys = set(re.findall(r"`([^`]+)`", section))
    missing = [(g, w, k) for g, w, k in shortcut_rows(window, [window.graph.toolbar])
               if k not in keys and not (k.startswith("Ctrl+") and k[5:].isdigit() and "Ctrl+1" in keys)]
    assert not missing, f"README's keyboard table lacks: {missing}"
