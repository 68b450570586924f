"""The Numerics and Run-on-target tabs inside the main window: real numerics worker process, real
pipeline; plot clicks select graph nodes (through provenance on other stages), graph selection
selects the layer in the plots, the heat overlay repaints node fills, Cancel ends the worker."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from tests.helpers.gui import lower_and_wait, wait_scene

ROOT = Path(__file__).resolve().parents[2]
NUMERICS_MS = 240_000
LINEAR = "cortex_m_quantized_linear_default"


def run_numerics(qtbot, win, inputs: str = "4") -> str:
    with qtbot.waitSignal(win.numerics.finished, timeout=NUMERICS_MS) as blocker:
        win.show_tab("numerics")
        win.run_numerics(inputs)
    return blocker.args[0]


def click_point(qtbot, win, node_id: str) -> None:
    """A real mouse click on the node's point of the per-layer SQNR plot."""
    view = win.numerics.view
    layer = view.result().layer(node_id)
    item = next(i for i in view._items if node_id in list(i.scatter.data["data"]))
    k = list(item.scatter.data["data"]).index(node_id)
    x, y = float(item.scatter.data["x"][k]), float(item.scatter.data["y"][k])
    assert x == layer.index
    qtbot.wait(QApplication.doubleClickInterval() + 50)    # two quick clicks are a double click
    vb = view.sqnr_plot.getPlotItem().getViewBox()
    pos = view.sqnr_plot.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
    qtbot.mouseMove(view.sqnr_plot.viewport(), pos)         # hover first, as a user does
    qtbot.mouseClick(view.sqnr_plot.viewport(), Qt.MouseButton.LeftButton, pos=pos,
                     delay=QApplication.doubleClickInterval() + 50)


@pytest.fixture
def numerics_window(qtbot, window):
    assert lower_and_wait(qtbot, window, "layernorm_mlp") == "done"
    wait_scene(qtbot, window)
    progress: list[tuple[str, int, int]] = []
    window.numerics.progress.connect(lambda t, d, n: progress.append((t, d, n)))
    assert run_numerics(qtbot, window) == "done", window.error_panel.title.text()
    window.progress_seen = progress
    return window


def test_numerics_fills_the_tab_and_links_plots_and_graph(qtbot, numerics_window) -> None:
    win = numerics_window
    res = win.numerics.result()
    final = win.session.final()
    assert res is not None and res.model == "layernorm_mlp" and res.n_inputs == 4
    assert res.layers and all(final.node(lr.node_id) is not None for lr in res.layers)
    assert win.tabs.currentWidget() is win.numerics
    assert "layernorm_mlp" in win.numerics.view.summary.text()
    assert win.numerics.view._items                                  # curves drawn
    assert any(n > 0 for _t, _d, n in win.progress_seen)             # progress reached the status bar
    assert not win.num_box.isVisible() and not win.numerics.cancel_btn.isEnabled()

    # click a point: the node is selected and centred in the final graph
    click_point(qtbot, win, LINEAR)
    qtbot.waitUntil(lambda: win.state.selected == LINEAR, timeout=5_000)
    assert win.state.stage == final.index
    wait_scene(qtbot, win)
    box = win.graph.current_scene().box_for_node(LINEAR)
    assert box.selected
    r = win.graph.view.mapFromScene(box.sceneBoundingRect()).boundingRect()
    assert win.graph.view.viewport().rect().contains(r.center())

    # on another stage, the click selects that stage's node (provenance), staying on the stage
    q = win.session.stage_index("quantized")
    win.state.set_stage(q)
    wait_scene(qtbot, win, q)
    win.state.select(None)
    click_point(qtbot, win, LINEAR)
    qtbot.waitUntil(lambda: win.state.selected is not None, timeout=5_000)
    assert win.state.stage == q
    snap = win.session.snapshots[q]
    node = snap.node(win.state.selected)
    assert node is not None and "linear" in node.target
    assert win.session.provenance().nearest(win.state.selected, q, final.index) == LINEAR

    # selecting a node in the graph selects its layer in the plots (final stage and through provenance)
    other = next(lr.node_id for lr in res.layers if lr.node_id != LINEAR and final.node(lr.node_id).kind != "input")
    win.state.focus(final.index, other)
    assert win.numerics.view.selected_node() == other
    win.state.set_stage(q)                      # the selection follows; the plots keep that layer
    win.state.select(win.session.provenance().nearest(LINEAR, final.index, q))
    assert win.numerics.view.selected_node() == LINEAR


def test_heat_overlay_repaints_node_fills(qtbot, numerics_window) -> None:
    win = numerics_window
    final = win.session.final()
    win.state.focus(final.index, LINEAR)
    wait_scene(qtbot, win)
    scene = win.graph.current_scene()
    box = scene.box_for_node(LINEAR)
    kind_fill = box.colors()[0]
    assert not win.graph.heat_legend.isVisible() and win.graph.legend.isVisible()

    def fill_pixel() -> QColor:
        view = win.graph.view
        rect = view.mapFromScene(box.mapRectToScene(box.rect)).boundingRect()
        origin = view.viewport().mapTo(win, rect.topLeft())
        return win.grab().toImage().pixelColor(origin.x() + 6, origin.y() + rect.height() // 2)

    before = fill_pixel()
    assert before.rgb() == kind_fill.rgb()
    win.numerics.act_heat.setChecked(True)
    colors = win.numerics.view.heat_colors()
    assert box.heat_on and box.colors()[0].rgb() == colors[LINEAR].rgb() != kind_fill.rgb()
    after = fill_pixel()
    assert after.rgb() == colors[LINEAR].rgb(), (after.name(), colors[LINEAR].name())
    assert win.graph.heat_legend.isVisible() and not win.graph.legend.isVisible()
    lo, hi, label = win.numerics.heat_info()
    assert win.graph.heat_legend.lo == lo and win.graph.heat_legend.hi == hi and "float" in label
    # nodes without numerics fade out; the fallback LayerNorm has numerics and keeps its heat colour
    x_box = scene.box_for_node("x")
    assert x_box is not None and x_box.heat is None
    # another stage gets the colours through provenance
    q = win.session.stage_index("quantized")
    win.state.set_stage(q)
    wait_scene(qtbot, win, q)
    qheat = [b for b in win.graph.current_scene().boxes.values() if b.heat is not None]
    assert len(qheat) >= 3
    # off again: kind colours come back
    win.numerics.act_heat.setChecked(False)
    win.state.set_stage(final.index)
    wait_scene(qtbot, win)
    assert not box.heat_on and box.colors()[0].rgb() == kind_fill.rgb()
    assert win.graph.legend.isVisible() and not win.graph.heat_legend.isVisible()
    # another lowering (other flow): the old result's node ids would not match, so it goes
    win.numerics.act_heat.setChecked(True)
    assert lower_and_wait(qtbot, win, "layernorm_mlp", flow="explicit") == "done"
    assert win.numerics.result() is None and win.graph.heat is None
    assert not win.numerics.act_heat.isChecked() and not win.numerics.act_heat.isEnabled()


def test_numerics_cancel_ends_the_worker(qtbot, window) -> None:
    window.model_bar.set_source("ds_cnn")
    with qtbot.waitSignal(window.numerics.worker.event, timeout=60_000):     # the worker is up
        window.run_numerics("8")
    pid = window.numerics.worker.process_id()
    assert pid > 0 and window.numerics.cancel_btn.isEnabled() and window.num_box.isVisible()
    with qtbot.waitSignal(window.numerics.finished, timeout=10_000) as blocker:
        window.num_cancel.click()                      # the status bar's Cancel
    assert blocker.args == ["cancelled"]
    assert window.numerics.run_btn.isEnabled() and not window.num_box.isVisible()
    qtbot.waitUntil(lambda: not window.numerics.worker.has_processes(), timeout=10_000)

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    qtbot.waitUntil(gone, timeout=10_000)
    assert window.numerics.result() is None


def test_bad_numerics_inputs_show_the_error_panel(qtbot, window, tmp_path) -> None:
    window.model_bar.set_source("layernorm_mlp")
    status = run_numerics(qtbot, window, str(tmp_path / "no-such-inputs"))
    assert status in ("failed", "error")
    panel = window.error_panel
    assert panel.isVisible() and "Numerics failed" in panel.title.text()
    assert "no-such-inputs" in panel.title.text()
    assert window.numerics.run_btn.isEnabled() and not window.numerics.act_heat.isEnabled()


def test_target_tab_follows_the_model_and_runs(qtbot, window, monkeypatch) -> None:
    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    tp = window.target_panel
    assert window.tabs.indexOf(window.target_scroll) >= 0 and window.target_scroll.widget() is tp
    assert lower_and_wait(qtbot, window, "layernorm_mlp") == "done"
    assert tp.source == "layernorm_mlp" and tp.flow == "legacy" and tp.cpu.currentText() == "cortex-m55"
    window.show_tab("target")
    tp.et_root.setText("")
    with qtbot.waitSignal(tp.finished, timeout=60_000):
        tp.run_btn.click()                            # no checkout: the doctor's findings instead
    text = tp.doctor_view.toPlainText()
    assert "No ExecuTorch checkout set" in text and "git clone" in text
    assert "Traceback" not in text
    with qtbot.waitSignal(tp.finished, timeout=180_000) as blocker:
        tp.selftest_btn.click()                       # needs no ExecuTorch
    if blocker.args == ["selftest", 0]:
        assert tp.result_view.outcome.text() == "PASS"
    else:                                             # no toolchain / QEMU here: explained, not a crash
        assert "Traceback" not in tp.console.toPlainText()
    # a gap-plot click selects the node in the graph
    tp.nodeClicked.emit(LINEAR)
    assert window.state.selected == LINEAR and window.state.stage == window.session.final().index


def test_cli_screenshot_of_the_numerics_tab_with_heat(tmp_path, gui_cache) -> None:
    out = tmp_path / "heat.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", CMLENS_CACHE=str(gui_cache),
               CMLENS_SETTINGS=str(tmp_path / "s.ini"))
    proc = subprocess.run([sys.executable, "-m", "app.cli.gui", "layernorm_mlp", "--tab", "numerics", "--heat",
                           "--numerics", "2", "--select", LINEAR, "--screenshot", str(out),
                           "--size", "1400x900"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    img = QImage(str(out))
    assert img.width() >= 1400
    # inferno's hot end (yellow/orange) appears on graph nodes, colour bars and nowhere else by default
    hot = 0
    for y in range(0, img.height(), 3):
        for x in range(0, img.width(), 3):
            c = img.pixelColor(x, y)
            if c.red() > 230 and 120 < c.green() < 235 and c.blue() < 80:
                hot += 1
    assert hot > 200
