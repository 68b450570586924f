"""The profile view (app/profile): bars from a profile on a real layernorm_mlp lowering, a real mouse
click on a bar selects its final-graph node, the cost heat overlay, the inspector lines, the unit named."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from PySide6.QtCore import QPointF, Qt

from backend_core.target.profile import build_profile, qemu_icount
from backend_core.target.profile.events import EtdumpProfile, Inference, InstructionEvent, op_base
from backend_core.target.profile.mapping import op_nodes
from profile_support import final_of  # noqa: F401  fixtures

COUNTS = {"quantized_linear": 1003, "native_layer_norm": 3003, "quantize_per_tensor": 203,
          "dequantize_per_tensor": 153, "clamp": 403}     # OPERATOR_CALL spans; the kernels' are 3 less


@pytest.fixture()
def profile_dict(final_of) -> dict:  # noqa: F811 - the imported fixture
    final = final_of("layernorm_mlp")
    t, evs = 0, []
    for k, n in enumerate(op_nodes(final)):
        c = COUNTS[op_base(n.target)]
        evs.append(InstructionEvent(0, k, op_base(n.target) + ".out", t, t + c, c - 3))
        t += c + 7
    p = build_profile(EtdumpProfile([Inference(0, 0, t + 100, evs)]), final, qemu_icount(5),
                      model="layernorm_mlp", target="cortex-m55")
    return p.to_dict()


def _click_bar(qtbot, view, index: int) -> None:
    """A real left click in the middle of bar `index`, through the plot's viewport."""
    vb = view.plot.getPlotItem().getViewBox()
    row = view.rows[index]
    scene_pt = vb.mapViewToScene(QPointF(row["count"] / 2, index))
    widget_pt = view.plot.mapFromScene(scene_pt)
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=widget_pt)


def test_bars_click_heat_and_inspector(qtbot, profile_dict) -> None:
    from app.profile.view import ProfileView

    view = ProfileView()
    qtbot.addWidget(view)
    view.resize(900, 450)
    view.show()
    qtbot.waitExposed(view)
    view.set_profile(profile_dict)
    assert "instructions executed (QEMU -icount), not cycles" in view.title.text()
    assert view.mode.currentData() == "islands"                    # a run with fallbacks opens on them
    labels = [r["label"] for r in view.rows]
    assert labels[-1].startswith("aten.native_layer_norm island")   # biggest on top
    assert "1.7x the CMSIS-NN kernels around it" in view.summary.text()

    with qtbot.waitSignal(view.nodeClicked, timeout=2000) as sig:
        _click_bar(qtbot, view, len(view.rows) - 1)
    assert sig.args == ["aten_native_layer_norm_default"]

    view.mode.setCurrentIndex(0)                                    # top ops
    assert view.rows[-1]["node"] == "aten_native_layer_norm_default"
    with qtbot.waitSignal(view.nodeClicked, timeout=2000) as sig:
        _click_bar(qtbot, view, 0)                                  # the smallest op, at the bottom
    assert sig.args == [view.rows[0]["node"]]

    with qtbot.waitSignal(view.heatChanged, timeout=2000) as heat:
        view.color_graph.setChecked(True)
    colors = heat.args[0]
    assert set(colors) == {o["node"] for o in profile_dict["ops"]}
    ln, q = colors["aten_native_layer_norm_default"], colors["cortex_m_quantize_per_tensor_default"]
    assert ln.lightness() > q.lightness()                           # costlier = brighter (inferno)
    colors2, (lo, hi), label, stops = view.heat_args()
    assert lo < hi <= 100.0 and "not cycles" in label and len(stops) == 11
    with qtbot.waitSignal(view.heatChanged, timeout=2000) as heat:
        view.color_graph.setChecked(False)
    assert heat.args == [{}]

    html = view.node_html("cortex_m_quantized_linear_default")
    assert "1,000 instructions" in html and "MACs 512" in html and "per MAC" in html
    assert "island" in view.node_html("aten_native_layer_norm_default")
    assert view.node_html("nope") == ""


def test_no_profile_says_how_to_get_one(qtbot) -> None:
    from app.profile.view import ProfileView

    view = ProfileView()
    qtbot.addWidget(view)
    view.set_profile(None)
    assert "--profile" in view.title.text() and view.rows == [] and view.heat_args() is None
