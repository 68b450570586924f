"""The GUI shows a pre-flight finding on its node: the lowering worker streams the final snapshot with
its findings (no torch in the GUI process), the graph marks the node, the inspector says why and how
to fix it. Real worker process, real pipeline, offscreen."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest

from .test_preflight_rules import GATE
from tests.helpers.gui import shown_window


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from app.runtime.qt_job import QtJob

    monkeypatch.setenv("CMLENS_SETTINGS", str(tmp_path / "settings.ini"))
    win = shown_window(qtbot, (1400, 900))
    yield win
    win.close()
    qtbot.waitUntil(lambda: not any(w.has_processes() for w in QtJob.instances()), timeout=20_000)


def test_finding_is_marked_on_the_node_and_explained_in_the_inspector(qtbot, window) -> None:
    # plain ExecuTorch's program: "keep going" (on by default) would mend the layouts the findings are about
    window.model_bar.keep_going.setChecked(False)
    with qtbot.waitSignal(window.session.finished, timeout=300_000) as blocker:
        window.open_model(GATE)
    assert blocker.args[0] == "done"
    final = len(window.session.snapshots) - 1
    window.state.focus(final, "aten__softmax_default")
    qtbot.waitUntil(lambda: window.graph.is_showing(final), timeout=60_000)
    scene = window.graph.view.graph_scene()
    box = scene.box_for_node("aten__softmax_default")
    assert box is not None and box.preflight == "will fail"
    exp = scene.box_for_node("aten_exp_default")
    assert exp is not None and exp.preflight == ""          # a fallback, but nothing will fail there
    html = window.inspector.browser.toPlainText()
    assert "Pre-flight: will fail on the target — dim-order-mismatch" in html
    assert "op_softmax.cpp:40" in html and ".contiguous()" in html
    assert "channels-last (0, 2, 3, 1)" in html                # the dim order row / evidence
