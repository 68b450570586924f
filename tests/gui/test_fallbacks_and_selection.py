"""Fallback table -> node focus, F3, selection kept across stages, compare view."""
from __future__ import annotations

from PySide6.QtCore import Qt

from tests.helpers.gui import lower_and_wait, wait_scene


def _box_center_in_view(win, node_id):
    box = win.graph.current_scene().box_for_node(node_id)
    return win.graph.view.mapFromScene(box.sceneBoundingRect().center())


def test_fallback_row_focuses_its_node(qtbot, window) -> None:
    assert lower_and_wait(qtbot, window, "layernorm_mlp") == "done"
    table = window.fallbacks.table
    assert window.fallbacks.row_count() == 2
    ids = {table.item(r, 0).text() for r in range(2)}
    assert ids == {"aten_native_layer_norm_default", "aten_clamp_default"}
    window.state.set_stage(0)                      # start somewhere else
    wait_scene(qtbot, window, 0)
    row = next(r for r in range(2) if table.item(r, 0).text() == "aten_clamp_default")
    rect = table.visualItemRect(table.item(row, 3))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    final = window.session.final().index
    assert window.state.stage == final
    assert window.state.selected == "aten_clamp_default"
    wait_scene(qtbot, window, final)
    scene = window.graph.current_scene()
    box = scene.box_for_node("aten_clamp_default")
    assert box is not None and box.selected
    # centred: the node is inside the visible viewport
    assert window.graph.view.viewport().rect().contains(_box_center_in_view(window, "aten_clamp_default"))
    html = window.inspector.browser.toPlainText()
    assert "activation_not_fused" in html and "Suggested change" in html


def test_f3_cycles_through_fallbacks(qtbot, window) -> None:
    lower_and_wait(qtbot, window, "layernorm_mlp")
    wait_scene(qtbot, window)
    seen = []
    for _ in range(3):
        qtbot.keyClick(window, Qt.Key.Key_F3)
        seen.append(window.state.selected)
    assert set(seen[:2]) == {"aten_native_layer_norm_default", "aten_clamp_default"}
    assert seen[2] == seen[0]


def test_selection_survives_stepping(qtbot, window) -> None:
    lower_and_wait(qtbot, window, "layernorm_mlp")
    s = window.session
    final = s.final().index
    window.state.focus(final, "aten_native_layer_norm_default")
    handle = s.final().node("aten_native_layer_norm_default").debug_handle
    edge = s.stage_index("edge")
    while window.state.stage > edge:
        window.state.step(-1)
        sel = window.state.selected
        assert sel is not None, f"selection lost at {s.snapshots[window.state.stage].stage}"
        assert s.snapshots[window.state.stage].node(sel).debug_handle == handle
    assert "layer_norm" in window.state.selected
    wait_scene(qtbot, window, edge)
    box = window.graph.current_scene().box_for_node(window.state.selected)
    assert box.selected
    assert window.graph.view.viewport().rect().contains(_box_center_in_view(window, window.state.selected))
    while window.state.stage < final:
        window.state.step(1)
    assert window.state.selected == "aten_native_layer_norm_default"


def test_compare_view_marks_removed_and_added(qtbot, window) -> None:
    lower_and_wait(qtbot, window, "layernorm_mlp")
    s = window.session
    fold = s.stage_index("FoldAndAnnotateQParamsPass")
    window.state.set_stage(fold)
    window.state.set_toggle("compare", True)
    qtbot.waitUntil(lambda: window.graph.left.graph_scene() is not None
                    and window.graph.left.graph_scene().snapshot.index == fold - 1, timeout=60_000)
    left = window.graph.left.graph_scene()
    removed = [b for b in left.boxes.values() if b.overlay == "removed"]
    assert len(removed) >= 5                      # the q/dq pairs folded away
    assert window.graph.left.isVisible()
    window.state.set_toggle("compare", False)
    assert not window.graph.left.isVisible()


def test_search_highlights_and_selects(qtbot, window) -> None:
    lower_and_wait(qtbot, window, "layernorm_mlp")
    wait_scene(qtbot, window)
    window.graph.search.setText("quantized_linear")
    qtbot.waitUntil(lambda: "match" in window.graph.match_label.text(), timeout=5000)
    window.graph.next_match()
    assert window.state.selected is not None and "quantized_linear" in window.state.selected
