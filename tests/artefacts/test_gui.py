"""The window opens ExecuTorch artefacts through the real worker process: a .pte's graph, the reason for
each fallback, a bad file's cause with no "Lowering…" left on screen, drag and drop, an ETRecord's stages
with an ETDump laid over the Run-on-target gap plot; float edges carry no Q-params label."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest

from app.artefacts.files import artefact_request
from tests.helpers.gui import close_window, lower_and_wait, shown_window, wait_scene


@pytest.fixture
def window(qtbot, no_leftover_processes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CMLENS_SETTINGS", str(tmp_path / "settings.ini"))
    win = shown_window(qtbot, (1400, 900))
    yield win
    close_window(qtbot, win)


def test_pte_opens_with_fallback_reasons_and_no_qparams_on_float_edges(qtbot, window, plain) -> None:
    pte = plain("layernorm_mlp").pte
    assert lower_and_wait(qtbot, window, str(pte)) == "done"
    s = window.session
    assert [x.stage for x in s.snapshots] == ["program"] and len(s.fallbacks()) == 2
    assert s.artefact["kind"] == "pte" and s.artefact["memory_plan"]["non_const_buffer_sizes"]
    wait_scene(qtbot, window)
    assert window.graph.stack.currentWidget() is window.graph.split
    assert window.fallbacks.table.rowCount() == 2
    scene = window.graph.current_scene()
    labels = {(e.route.src, e.route.dst): e.qlabel for e in scene.edges}
    assert labels[("cortex_m_dequantize_per_tensor_out", "aten_native_layer_norm_out")] == ""   # float32 edge
    q = labels[("cortex_m_quantize_per_tensor_out", "cortex_m_quantized_linear_out")]
    assert q.startswith("s=") and " zp=" in q
    assert "layernorm_mlp.pte" in window.windowTitle()


def test_bad_file_says_why_and_leaves_no_lowering_text(qtbot, window, plain, tmp_path: Path) -> None:
    bad = tmp_path / "model.pte"
    bad.write_bytes(b"not a program at all")
    assert lower_and_wait(qtbot, window, str(bad)) == "error"
    assert window.error_panel.isVisible()
    text = window.graph.placeholder.text()
    assert "Lowering…" not in text and "Nothing to show" in text and "not an ExecuTorch file" in text
    # the window is alive: a good file opens next
    assert lower_and_wait(qtbot, window, str(plain("ds_cnn").pte)) == "done"
    assert not window.error_panel.isVisible()
    wait_scene(qtbot, window)


def test_drop_opens_a_program(qtbot, window, plain) -> None:
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(plain("ds_cnn").bpte))])
    ev = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(window.session.finished, timeout=240_000):
        window.dropEvent(ev)
    assert window.session.status == "done" and window.session.artefact["kind"] == "bpte"
    assert window.session.artefact["bundled"][0]["inputs"][0]["shape"] == [1, 1, 49, 10]


def test_artefact_request_pairs_companions() -> None:
    assert artefact_request(["/r/run.etdump"], "/r/model.etrecord") == (
        "/r/model.etrecord", (("etdump", "/r/run.etdump"),))
    assert artefact_request(["/r/m.pte", "/r/m.etrecord", "/r/debug_buffer.bin", "/r/run.etdump"]) == (
        "/r/m.etrecord", (("debug_buffer", "/r/debug_buffer.bin"), ("etdump", "/r/run.etdump"), ("program", "/r/m.pte")))
    assert artefact_request(["/r/model.py"]) is None


def test_etrecord_with_etdump_fills_the_gap_plot(qtbot, window, recorded_run) -> None:
    work, made = recorded_run
    status = lower_and_wait(qtbot, window, str(made.etrecord),
                            companions=(("etdump", str(work / "run.etdump")), ("program", str(made.bpte))))
    assert status == "done"
    assert [x.stage for x in window.session.snapshots][-2:] == ["edge program", "program"]
    plot = window.target_panel.gap_plot
    assert len(plot.layers) == 5 and all(g["mismatched"] == 0 for g in plot.layers)
    assert window.target_panel.result_view.outcome.text() == "recorded run"     # normal type, no banner
    assert "5/5 layers bit-identical" in window.target_panel.result_view.summary.text()
    # the gaps colour the graph as well: every measured layer bit-identical, so every one green
    heat = window.graph.heat_overlay.colors
    assert heat and {g["node_id"] for g in plot.layers} <= set(heat)
    assert len({c.name() for c in heat.values()}) == 1
    # a click on a gap selects the program node
    window.target_panel.nodeClicked.emit(plot.layers[1]["node_id"])
    qtbot.waitUntil(lambda: window.state.selected == plot.layers[1]["node_id"], timeout=10_000)
