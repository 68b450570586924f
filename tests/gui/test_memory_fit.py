"""The Memory tab's "Fit this board" in the main window: a real lowering, then the real schedule search as
a Job in the job worker (lower + memory + schedule, the Job `cmlens memory --schedule fit:B` runs),
narrowed to one split and one grid so a search is a few seconds. A tiny CNN (tests/memory/models/
wide_stem_net.py) that stm32f746 cannot hold as ExecuTorch plans it: with an int8 input it fits in 2×2
patches; with its float input no schedule fits (the step's bad-input message). What is asserted is what a
user sees: the after curve on the timeline and below the before one, the numbers, the per-patch marks on the
graph, progress in the status bar, Cancel and a bad board leaving the schedule found before."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest
from PySide6.QtCore import Qt

from tests.helpers.gui import LOWER_TIMEOUT_MS, wait_scene

MODEL = str(Path(__file__).resolve().parents[1] / "memory" / "models" / "wide_stem_net.py")
BOARD = "stm32f746"
SPLIT = "cortex_m_quantized_conv2d_default_1"       # the 1x1 conv after the stem and the depthwise
FIT_TIMEOUT_MS = 300_000                            # a cold worker's lowering and search on a loaded machine


def _fit(qtbot, win, int8: bool) -> str:
    mem = win.memory
    mem.fit_row.int8.setChecked(int8)
    with qtbot.waitSignal(win.fit.finished, timeout=FIT_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(mem.fit_row.fit_btn, Qt.MouseButton.LeftButton)
    return blocker.args[0]


@pytest.fixture(scope="module")
def fitted(qapp, gui_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """The window with wide_stem_net lowered, stm32f746 picked and fitted with an int8 input, once for
    the module (a cold worker's lowering and search is the expensive part; each test then clicks)."""
    from app.shell.main_window import MainWindow
    from tests.gui.filled import spin, wait_for
    from tests.helpers.processes import leftovers

    mp = pytest.MonkeyPatch()
    mp.setenv("CMLENS_CACHE", str(gui_cache))
    mp.setenv("CMLENS_SETTINGS", str(tmp_path_factory.mktemp("fit") / "settings.ini"))
    win = MainWindow()
    win.resize(1366, 768)
    win.show()
    win.fit.grids, win.fit.splits = (2,), (SPLIT,)
    status = wait_for(win.session.finished, LOWER_TIMEOUT_MS / 1000, lambda: win.open_model(MODEL, target="cortex-m55"))
    assert status == ("done",), win.error_panel.title.text()
    while not win.graph.is_showing(win.state.stage):
        spin(50)
    win.show_tab("memory")
    win.memory.set_board(BOARD)
    assert not win.memory.verdict()["fits"]                 # ExecuTorch's plan does not fit stm32f746
    progress: list[tuple[str, int, int]] = []
    win.fit.progress.connect(lambda *a: progress.append(a))
    win.memory.fit_row.int8.setChecked(True)
    assert wait_for(win.fit.finished, FIT_TIMEOUT_MS / 1000, win.memory.fit_row.fit_btn.click) == ("done",), \
        win.fit.message
    win.fit_progress_seen = progress
    yield win
    win.close()
    deadline = time.monotonic() + 20
    while leftovers() != ([], []) and time.monotonic() < deadline:
        spin(50)
    mp.undo()
    assert leftovers() == ([], []), "the window left a thread or a job worker running"


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    """The window lives for the module (its layout threads with it): tests/conftest.py's check that no
    thread or worker is left runs once it is closed (the fixture above), and after each test for the
    workers alone."""
    from app.runtime.qt_job import QtJob

    yield
    deadline = time.monotonic() + 20
    while any(w.has_processes() for w in QtJob.instances()) and time.monotonic() < deadline:
        from tests.gui.filled import spin

        spin(50)
    assert not any(w.has_processes() for w in QtJob.instances()), "a job worker was left running"


def test_fit_draws_the_after_curve_below_the_before_one(qtbot, fitted) -> None:
    win, mem = fitted, fitted.memory
    # progress per candidate went through the status bar while it ran
    assert any(total == 1 and done == 1 for _t, done, total in win.fit_progress_seen)
    after = mem.overlay.after
    assert after is not None and after in mem.timeline_plot.getPlotItem().items
    _x, y_after = after.getData()
    before = [s["live_bytes"] for s in mem.report["timeline"]]
    assert max(y_after) < max(before)                       # the peak came down
    labels = [lab.text for _sample, lab in mem.overlay.legend.items]
    assert any(t.startswith("after 2×2 ") for t in labels)
    assert any("layer floor" in t for t in labels) and any("patch floor" in t for t in labels)
    assert any(t.startswith(f"{BOARD} RAM 320.0 KiB") for t in labels)
    text = mem.fit_row.label.text()
    assert f"fits {BOARD}" in text and "× smaller" in text and "% MACs" in text and "2×2 patches" in text
    # the graph marks the ops that run per patch and draws the grid on the input
    final = win.session.final()
    win.state.focus(final.index, SPLIT)
    wait_scene(qtbot, win, final.index)
    scene = win.graph.current_scene()
    marked = {b.view_item.id for b in scene.boxes.values() if b.patches == 4}
    assert set(win.fit.result["patched_nodes"]) <= marked and SPLIT in marked
    assert scene.box_for_node(win.fit.result["input_node"]).patch_grid == (2, 2)
    assert scene.box_for_node("cortex_m_quantized_linear_default").patches == 0
    assert "runs per patch</b>: 4 times" in mem.node_html(SPLIT)


def test_cancel_keeps_the_schedule_found_before(qtbot, fitted) -> None:
    win, mem = fitted, fitted.memory
    shown, label = win.fit.result, mem.fit_row.label.text()
    with qtbot.waitSignal(win.fit.progress, timeout=30_000):
        mem.fit_row.fit_btn.click()
    assert win.fit_status.isVisible() and mem.fit_row.cancel_btn.isEnabled()
    with qtbot.waitSignal(win.fit.finished, timeout=5_000) as blocker:
        mem.fit_row.cancel_btn.click()
    assert blocker.args == ["cancelled"]
    assert win.fit.result is shown and mem.overlay.after is not None
    assert "cancelled" in mem.fit_row.label.text() and label != mem.fit_row.label.text()
    assert mem.fit_row.fit_btn.isEnabled() and not win.fit_status.isVisible()


def test_a_board_it_cannot_fit_says_why_and_keeps_the_last_schedule(qtbot, fitted) -> None:
    win, mem = fitted, fitted.memory
    shown = win.fit.result
    assert _fit(qtbot, win, int8=False) != "done"
    text = mem.fit_row.label.text()
    assert f"{BOARD}: the model does not fit even with the best patch schedule" in text
    assert "short of RAM by" in text and "--input-dtype int8" in text and "Traceback" not in text
    assert "shown: the schedule found before" in text
    assert win.fit.result is shown and mem.overlay.after is not None
