"""The Numerics tab: set_result, click-to-select, heat colours (pytest-qt, offscreen)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def test_view_shows_result_and_emits_node_clicked(qtbot, ds_cnn) -> None:
    from app.numerics.view import NumericsView, error_colors

    view = NumericsView()
    qtbot.addWidget(view)
    heat = []
    view.heatChanged.connect(heat.append)
    view.set_result(ds_cnn.result.to_dict())             # as it arrives from the worker
    assert view.result() is not None and heat and len(heat[-1]) == len(ds_cnn.result.layers)
    assert view.selected_node() == ds_cnn.result.worst(1)[0].node_id

    target = ds_cnn.result.layers[3]
    item = view._items[0]
    point = next(p for p in item.scatter.points() if p.data() == target.node_id)
    with qtbot.waitSignal(view.nodeClicked, timeout=1000) as sig:
        item.scatter.sigClicked.emit(item.scatter, [point], None)
    assert sig.args == [target.node_id]
    assert view.selected_node() == target.node_id
    assert view.scatter_plot.getPlotItem().listDataItems()       # scatter drawn
    assert view.int_hist.getPlotItem().listDataItems()           # int8 histogram drawn

    view.select_node("no_such_node")                              # ignored
    assert view.selected_node() == target.node_id

    colors = error_colors(ds_cnn.result)
    assert set(colors) == {lr.node_id for lr in ds_cnn.result.layers if lr.vs_float is not None}
    assert all(c.isValid() for c in colors.values())
    view.set_result(None)
    assert heat[-1] == {}
