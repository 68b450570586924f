"""A changed model is noticed (issue 20), in the app with the real worker: the model bar says "changed on
disk — Lower again" when a helper the model imports is edited (not when it is only touched), Lower again
shows the new fallback with the same op still selected, and `cmlens gui --watch` re-lowers by itself,
survives a deleted helper with a clear error and recovers when it comes back."""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.lowering.source_watch import QUIET_MS
from tests.helpers.gui import LOWER_TIMEOUT_MS, lower_and_wait
from tests.helpers.split_model import HELPER_WITH_LAYERNORM, write_split_model


def head_linear(win) -> str:
    """The final stage's node of the user's `head.out` Linear."""
    final = win.session.final()
    return next(n.id for n in final.nodes if n.module_path == "head.out" and "linear" in n.target)


def selected_node(win):
    return win.session.snapshots[win.state.stage].node(win.state.selected)


def test_edited_helper_is_noticed_and_lower_again_keeps_the_selection(qtbot, window, tmp_path: Path) -> None:
    model = write_split_model(tmp_path)
    assert lower_and_wait(qtbot, window, str(model)) == "done"
    bar, session = window.model_bar, window.session
    assert not session.fallbacks() and not bar.changed_btn.isVisible()
    assert {Path(p).name for p in session.watch.paths} >= {"model.py", "helper.py", "head.py", "scale.txt"}
    final = session.final().index
    window.state.focus(final, head_linear(window))

    later = time.time() + 5
    os.utime(tmp_path / "helper.py", (later, later))           # touched, not changed: no notice
    qtbot.wait(QUIET_MS * 4)
    assert not bar.changed_btn.isVisible() and session.source_change == ""

    (tmp_path / "helper.py").write_text(HELPER_WITH_LAYERNORM)
    qtbot.waitUntil(bar.changed_btn.isVisible, timeout=10_000)
    assert bar.changed_btn.text() == "changed on disk — Lower again"
    assert "helper.py changed" in bar.stage_label.text() and session.source_change == "helper.py changed"
    assert session.fallbacks() == []                             # the shown result is the old one, still

    with qtbot.waitSignal(session.finished, timeout=LOWER_TIMEOUT_MS):
        bar.changed_btn.click()
    assert session.status == "done" and not bar.changed_btn.isVisible()
    assert [n.target for n in session.fallbacks()] == ["aten.native_layer_norm.default"]
    assert any("not from the cache: helper.py changed" in line for line in session.log)
    node = selected_node(window)                                  # the same op, found through provenance
    assert window.state.stage == session.final().index
    assert node is not None and node.module_path == "head.out" and "linear" in node.target


def _gui_args(*argv: str) -> argparse.Namespace:
    from app.cli.gui import add_gui_command

    ap = argparse.ArgumentParser(prog="cmlens")
    add_gui_command(ap.add_subparsers(dest="command"))
    return ap.parse_args(["gui", *argv])


def test_cmlens_gui_watch_relowers_by_itself(qtbot, tmp_path: Path) -> None:
    """`cmlens gui model.py --watch`, driven from inside its own event loop: edit the helper (a fallback
    appears, the selection stays), delete it (a clear error), put it back (lowered again)."""
    from app.cli.gui import run_gui
    from app.shell.main_window import MainWindow

    model = write_split_model(tmp_path)
    args = _gui_args(str(model), "--watch")
    seen: dict = {"step": 0, "errors": [], "deadline": time.monotonic() + 3 * LOWER_TIMEOUT_MS / 1000}
    app = QApplication.instance()
    style = app.styleSheet()

    def drive() -> None:
        win = next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()), None)
        if win is None:
            return
        s = win.session
        if s.job.has_processes() or s.is_running():
            return                        # each step acts once the worker has exited (finished, views updated)
        if time.monotonic() > seen["deadline"]:
            seen["errors"].append(f"timed out at step {seen['step']} (status {s.status})")
            win.close()
        elif seen["step"] == 0 and s.status == "done":
            seen["auto"] = win.model_bar.auto_relower.isChecked() and s.auto_relower
            seen["first_fallbacks"] = len(s.fallbacks())
            win.state.focus(s.final().index, head_linear(win))
            (tmp_path / "helper.py").write_text(HELPER_WITH_LAYERNORM)
            seen["step"] = 1
        elif seen["step"] == 1 and s.status == "done" and s.fallbacks():
            seen["fallbacks"] = [n.target for n in s.fallbacks()]
            node = selected_node(win)
            seen["selected"] = (node.module_path, node.target) if node is not None else None
            (tmp_path / "helper.py").unlink()
            seen["step"] = 2
        elif seen["step"] == 2 and s.status == "error":
            seen["error"] = (s.error or {}).get("message", "")
            (tmp_path / "helper.py").write_text(HELPER_WITH_LAYERNORM)
            seen["step"] = 3
        elif seen["step"] == 3 and s.status == "done":
            seen["recovered"] = [n.target for n in s.fallbacks()]
            win.close()

    timer = QTimer()
    timer.timeout.connect(drive)
    timer.start(200)
    try:
        assert run_gui(args) == 0
    finally:
        timer.stop()
        app.setStyleSheet(style)
    assert not seen["errors"], seen
    assert seen["auto"] and seen["first_fallbacks"] == 0
    assert seen["fallbacks"] == ["aten.native_layer_norm.default"]
    assert seen["selected"][0] == "head.out" and "linear" in seen["selected"][1]
    assert "could not import 'helper'" in seen["error"] and "(the model's folder)" in seen["error"]
    assert seen["recovered"] == ["aten.native_layer_norm.default"]
