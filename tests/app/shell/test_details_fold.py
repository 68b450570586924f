"""The graph gets the room (issue 37): with no portable fallbacks (ds_cnn, the model `make run` opens) the
Fallbacks tab folds to its one sentence and the graph takes the height the empty table took; another tab,
or a lowering with fallbacks, opens the Details dock again."""
from __future__ import annotations

import pytest

from tests.helpers.gui import lower_and_wait, shown_window

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


def test_an_empty_fallback_table_folds_to_one_line(qtbot) -> None:

    win = shown_window(qtbot, (1366, 768))
    assert lower_and_wait(qtbot, win, "ds_cnn") == "done"
    qtbot.waitUntil(lambda: win.details_fold.is_folded, timeout=5_000)
    assert not win.fallbacks.table.isVisible() and "No portable fallbacks" in win.fallbacks.summary.text()
    qtbot.waitUntil(lambda: win.bottom_dock.height() < 110, timeout=5_000)
    folded_graph = win.graph.height()
    assert folded_graph > 0.6 * win.height(), (folded_graph, win.height())

    win.show_tab("numerics")                       # another tab: the dock opens to its usual height
    qtbot.waitUntil(lambda: not win.details_fold.is_folded and win.bottom_dock.height() > 200, timeout=5_000)
    assert win.graph.height() < folded_graph

    win.show_tab("fallbacks")
    assert lower_and_wait(qtbot, win, "layernorm_mlp") == "done"    # fallbacks to list: the table is back
    qtbot.waitUntil(lambda: win.fallbacks.table.isVisible() and win.fallbacks.row_count() == 2, timeout=5_000)
    assert not win.details_fold.is_folded and win.bottom_dock.height() > 200
    win.shutdown()
    win.close()
