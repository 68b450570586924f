"""The app's side-by-side compare (issue 17 part 2): a real `cmlens compare` of the tiny_net v1/v2
fixtures in a child process, drawn as two graph panes with selection synced by the matched rows."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt

from app.compare import CompareView

MODELS = Path(__file__).resolve().parents[1] / "compare" / "models"
V1, V2 = str(MODELS / "v1" / "tiny_net.py"), str(MODELS / "v2" / "tiny_net.py")


def _selected(view: CompareView, side: int) -> str | None:
    scene = view.panes[side].scene
    return next((iid for iid, b in scene.boxes.items() if b.selected), None)


def _ringed(view: CompareView, side: int) -> set[str]:
    return {iid for iid, b in view.panes[side].scene.boxes.items() if b.match}


def _click_node(qtbot, view: CompareView, side: int, node_id: str) -> None:
    pane = view.panes[side]
    box = pane.scene.box_for_node(node_id)
    pane.view.centerOn(box)
    pos = pane.view.mapFromScene(box.sceneBoundingRect().center())
    qtbot.mouseClick(pane.view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos.x(), pos.y()))


@pytest.fixture
def compared(qtbot, tmp_path):
    pytest.importorskip("executorch")      # the child process lowers; this process never imports torch
    torch_before = "torch" in sys.modules    # an earlier test in this process may have imported it
    view = CompareView()
    view.torch_before = torch_before
    qtbot.addWidget(view)
    view.resize(1366, 768)
    view.show()
    with qtbot.waitSignal(view.side_jobs.finished, timeout=300_000):
        view.start([V1, V2])
    qtbot.waitUntil(lambda: all(p.scene is not None for p in view.panes), timeout=60_000)
    yield view
    view.shutdown()


def test_compare_two_versions_synced_selection(qtbot, compared: CompareView, tmp_path) -> None:
    view = compared
    assert view.torch_before or "torch" not in sys.modules      # the lowering ran in the child process
    assert [s.label for s in view.data.sides] == ["v1/tiny_net.py", "v2/tiny_net.py"]
    assert "+1 / -0 fallbacks" in view.status.text()

    # a node clicked on side 1 selects the matched node on side 2, and every node of the row (one-to-many)
    _click_node(qtbot, view, 0, "cortex_m_quantized_linear_default")
    row = view.row
    assert view.data.rows[row]["label"].startswith("aten.linear")
    assert _selected(view, 1) == "cortex_m_quantized_linear_default"
    assert _ringed(view, 1) == {"cortex_m_quantized_linear_default", "cortex_m_dequantize_per_tensor_default_1"}
    assert view.inspector.item(0, 0).text() == "lowered" and view.inspector.item(0, 1).text() == "lowered"

    # many-to-one: the relu fused into conv1 selects the conv on both sides
    relu = next(i for i, r in enumerate(view.data.rows) if r["label"].startswith("aten.relu `relu`"))
    view.select_row(relu)
    assert _selected(view, 0) == _selected(view, 1) == "cortex_m_quantized_conv2d_default"
    assert view.inspector.item(0, 0).text().startswith("fused (into aten.conv2d")

    # the what-changed list: the new fallback (the LayerNorm added on line 22) is red and selects its row
    texts = [view.changed.item(i).text() for i in range(view.changed.count())]
    ln = next(i for i, t in enumerate(texts) if "layer_norm `layer_norm`" in t)
    assert texts[ln].startswith("[new fallback]") and "tiny_net.py:22" in texts[ln]
    item = view.changed.item(ln)
    qtbot.mouseClick(view.changed.viewport(), Qt.MouseButton.LeftButton, pos=view.changed.visualItemRect(item).center())
    assert view.data.rows[view.row]["label"].startswith("aten.layer_norm")
    assert view.changed.currentRow() == ln
    assert _selected(view, 1) == "aten_native_layer_norm_default" and _selected(view, 0) is None
    assert view.inspector.item(0, 1).text() == "fallback" and view.inspector.item(0, 0).text() == "—"
    assert view.inspector.item(1, 1).text().startswith("not_annotated")
    box = view.panes[1].scene.box_for_node("aten_native_layer_norm_default")
    assert box.heat.name() == "#ef9a9a"                   # red: a new fallback
    conv2 = view.panes[1].scene.box_for_node("cortex_m_quantized_conv2d_default_1")
    assert conv2.heat.name() == "#ffe082"                 # amber: widened 8 -> 16 channels
    view.grab().save(str(tmp_path / "compare_view.png"))

    # viewport sync: zoom and pan side 1 onto conv1; side 2 follows to conv1's match at the same zoom
    p0, p1 = view.panes
    p0.view.zoom(3.0)
    b0 = p0.scene.box_for_node("cortex_m_quantized_conv2d_default")
    p0.view.centerOn(b0.sceneBoundingRect().center())
    b1 = p1.scene.box_for_node("cortex_m_quantized_conv2d_default")
    assert abs(p1.view.zoom_factor() - p0.view.zoom_factor()) < 1e-3
    off0 = p0.center() - b0.sceneBoundingRect().center()
    off1 = p1.center() - b1.sceneBoundingRect().center()
    assert (off1 - off0).manhattanLength() < 20, (off0, off1)
    # unticked, the other side stays where it is
    view.sync_view.setChecked(False)
    before = p1.center()
    p0.view.centerOn(p0.scene.box_for_node("cortex_m_quantized_linear_default").sceneBoundingRect().center())
    assert (p1.center() - before).manhattanLength() < 1


def test_compare_error_and_cancel_keep_the_results(qtbot, compared: CompareView, tmp_path) -> None:
    view = compared
    before = view.data
    with qtbot.waitSignal(view.side_jobs.failed, timeout=60_000):
        view.start([V1, str(tmp_path / "missing.py")])
    assert "missing.py" in view.status.text() and "exit 2" in view.status.text()
    assert view.data is before and len(view.panes) == 2
    with qtbot.waitSignal(view.side_jobs.failed, timeout=20_000):
        view.start([V1, V2 + "@m4"])
        view.cancel()
    assert view.status.text().startswith("Cancelled") and view.data is before
    assert not view.cancel_button.isEnabled()


def test_compare_dialog_builds_the_sides(qtbot) -> None:
    """Tools > Compare with…: side 1 is the current lowering; by default side 2 is the same model on another CPU."""
    from app.compare import CompareDialog

    dlg = CompareDialog(V1, "cortex-m55", "legacy", False)
    qtbot.addWidget(dlg)
    assert dlg.side_args() == [f"{V1}@target=cortex-m55,flow=legacy,channels_last=no",
                               f"{V1}@target=cortex-m4,flow=legacy,activations=int8,channels_last=no"]
    dlg.source.setText("theirs.pte")                      # an artefact takes no lowering options
    dlg.more.setText('"old run.json" m.py@m7')
    assert dlg.side_args()[1:] == ["theirs.pte", "old run.json", "m.py@m7"]
