"""The window's History tab on a recorded store (issue 35): a chart per figure over the 8 commits of the
test repository, the changes listed (commit 5: the LayerNorm's fallback; commit 7: the arena); a click on
commit 5's point shows the lowering recorded there as the window's lowering (its fallback on the user's
LayerNorm, no lowering started), a click on its change opens the compare against commit 4."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .helpers import cli
from tests.helpers.gui import shown_window

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


def test_the_history_tab_charts_the_store_and_opens_a_point_and_a_change(qtbot, model_repo, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMLENS_SETTINGS", str(tmp_path / "settings.ini"))   # the tab remembers its store
    repo, commits = model_repo
    store = tmp_path / "history.db"
    code, _out, err = cli("history", "backfill", repo / "model.py", "--last", "8", "--calib", "1", "--executor",
                          "local", "--history", store)
    assert code == 0, err

    win = shown_window(qtbot, (1366, 768))
    win.show_tab("history")
    view = win.history
    view.open_store(str(store))
    qtbot.waitUntil(lambda: view.data is not None, timeout=60_000)
    assert "fallbacks" in view.chart_names() and "arena_bytes" in view.chart_names()
    assert len(view.data.history.records) == 8
    texts = [view.changes.item(i).text() for i in range(view.changes.count())]
    assert any(t.startswith(commits[4][:8]) and "fallbacks" in t for t in texts), texts
    assert any(t.startswith(commits[6][:8]) and "arena" in t for t in texts), texts
    qtbot.wait(300)                                      # the charts paint
    import pyqtgraph as pg

    charts = view.charts.findChildren(pg.PlotWidget)
    assert len(charts) == len(view.chart_names()) and charts[0].isVisible()
    if os.environ.get("CMLENS_TEST_SCREENSHOT"):
        win.grab().save(str(Path(os.environ["CMLENS_TEST_SCREENSHOT"]) / "history_1366.png"))

    with qtbot.waitSignal(win.session.finished, timeout=30_000):
        view.open_point(4)                               # commit 5: "Add a LayerNorm after fc1"
    assert not win.session.job.is_running() and win.session.status == "done"
    assert any("layer_norm" in n.target for n in win.session.fallbacks())
    assert "not lowered again" in win.statusBar().currentMessage()

    row = next(i for i, t in enumerate(texts) if t.startswith(commits[4][:8]) and "fallbacks" in t)
    view.open_change(row)
    qtbot.waitUntil(lambda: win.compare.data is not None, timeout=30_000)
    assert win.tabs.currentWidget() is win.compare and len(win.compare.panes) == 2
    assert any("layer_norm" in str(r.get("label", "")) or "layer_norm" in str(r) for r in win.compare.data.rows
               if r.get("delta") or True)
    win.shutdown()
    win.close()
    shutil.rmtree(repo / ".cmlens", ignore_errors=True)
