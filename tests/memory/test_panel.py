"""The Memory panel on a real lowering's memory report (as the lowering worker's done message carries
it): bars against the board, the timeline with the peak and float islands, click -> node, board picker,
bad custom sizes shown in words."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("pytestqt")

from backend_core.target.memory import analyze_memory

from .conftest import lowered_program


@pytest.fixture()
def panel(qtbot):
    from app.memory import MemoryPanel

    p = MemoryPanel()
    qtbot.addWidget(p)
    p.resize(900, 650)
    return p


def _done(model: str) -> dict:
    low = lowered_program(model)
    rep = analyze_memory(low.pte, low.final, target="cortex-m55")
    rep["model"] = model
    return {"type": "done", "status": "done", "memory": rep}


def test_panel_shows_fit_and_flips_with_the_board(panel, qtbot) -> None:
    panel.set_lowering_result(_done("ds_cnn"))
    assert panel.verdict() is None and "pick a board" in panel.verdict_label.text()
    panel.set_board("stm32f746")
    assert panel.verdict()["fits"] and "fits stm32f746" in panel.verdict_label.text()
    assert "cortex_m_quantized_depthwise_conv2d_default_1" in panel.title.text()   # the peak op
    panel.set_board("custom sizes…")
    panel.ram.setText("24K")
    panel.flash.setText("1M")
    panel.apply.click()
    assert panel.verdict()["fits"] is False and "does not fit" in panel.verdict_label.text()
    panel.ram.setText("lots")
    panel.apply.click()
    assert "Cannot read the RAM size" in panel.verdict_label.text()


def test_timeline_click_selects_the_node_and_islands_are_shaded(panel, qtbot) -> None:
    import pyqtgraph as pg

    panel.set_lowering_result(_done("layernorm_mlp"))
    regions = [it for it in panel.timeline.items if isinstance(it, pg.LinearRegionItem)]
    assert len(regions) == 1 and regions[0].getRegion() == (2.5, 3.5)      # the LayerNorm island, op #3
    pts = panel.timeline.scatter.points()
    with qtbot.waitSignal(panel.nodeClicked, timeout=1000) as sig:
        panel.timeline._clicked(panel.timeline.scatter, [pts[3]])
    assert sig.args == ["aten_native_layer_norm_default"]
    html = panel.node_html("aten_native_layer_norm_default")
    assert "the peak" in html and "float island" in html and "memory id 1" in html
    heat = panel.bytes_by_node()
    assert max(heat, key=heat.get) == "aten_native_layer_norm_default"


def test_no_memory_in_the_message_says_why(panel) -> None:
    panel.set_lowering_result({"type": "done", "status": "failed", "memory": None})
    assert "no memory report" in panel.title.text()
    panel.set_lowering_result({"type": "done", "status": "done", "memory": {"error": "ValueError: boom"}})
    assert "boom" in panel.title.text()
