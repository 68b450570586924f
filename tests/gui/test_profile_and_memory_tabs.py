"""A run's per-op profile and the lowering's memory report inside the main window. Profile: the
Run-on-target panel's Profile tab fills, a bar click selects the node in the graph, the graph can be
coloured by cost, and the inspector shows the node's instructions (the real profile of a recorded QEMU
-icount run of layernorm_mlp on M55, tests/profile/fixtures). Memory: see its test. Lowerings are real."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.gui import lower_and_wait, wait_scene

FIXTURES = Path(__file__).resolve().parents[1] / "profile" / "fixtures"


@pytest.fixture(scope="module")
def recorded_profile() -> dict:
    from backend_core.target.profile import build_profile, parse_etdump, qemu_icount
    from backend_core.common.snapshot.model import snapshot_from_dict
    from backend_core.target.simulate.uart import parse_uart

    report = parse_uart((FIXTURES / "uart_profile_layernorm_mlp_mps3-an547.txt").read_text())
    final = snapshot_from_dict(json.loads((FIXTURES / "layernorm_mlp_m55.final.json").read_text()))
    events = parse_etdump(report.etdumps[0].files["etdump.bin"])
    return build_profile(events, final, qemu_icount(5, 32e6), model="layernorm_mlp", target="cortex-m55").to_dict()


def test_profile_tab_graph_cost_colours_and_inspector(qtbot, window, recorded_profile) -> None:
    assert lower_and_wait(qtbot, window, "layernorm_mlp") == "done"
    wait_scene(qtbot, window)
    window.show_tab("target")
    panel, view = window.target_panel, window.links.profile
    panel.runFinished.emit({"outcome": "PASS", "profile": recorded_profile})
    assert panel.tabs.currentWidget() is view
    assert "instructions" in view.title.text()
    # a bar click -> the node is selected in the graph (final stage)
    view.nodeClicked.emit("aten_native_layer_norm_default")
    final = window.session.final()
    assert window.state.stage == final.index and window.state.selected == "aten_native_layer_norm_default"
    html = window.inspector.browser.toPlainText()
    assert "instructions" in html.lower()
    # colour the graph by cost: the heat overlay holds final-graph colours
    view.color_graph.setChecked(True)
    qtbot.waitUntil(lambda: window.graph.heat is not None, timeout=5_000)
    assert "aten_native_layer_norm_default" in window.graph.heat
    view.color_graph.setChecked(False)
    qtbot.waitUntil(lambda: window.graph.heat is None, timeout=5_000)


def test_memory_tab_follows_the_lowering_and_selects_nodes(qtbot, window) -> None:
    """The lowering worker runs with --memory: the Memory tab shows the planned arena of the lowering
    on screen, a click on the timeline selects the node in the graph, the inspector shows its bytes."""
    assert lower_and_wait(qtbot, window, "ds_cnn") == "done"
    wait_scene(qtbot, window)
    window.show_tab("memory")
    mem = window.memory
    assert mem.report is not None and mem.report["planned_bytes"] == [20464]      # ds_cnn on M55
    assert "planned arena" in mem.title.text()
    peak = mem.report["peak_op"]
    mem.nodeClicked.emit(peak)
    assert window.state.selected == peak
    assert "memory" in window.inspector.browser.toPlainText().lower()
