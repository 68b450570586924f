"""Issue 44, items 5 and 6, on the real window: hovering a chart point shows that commit's tip (pyqtgraph
0.14 calls the tip with x=, y=, data= by keyword; a lambda with other names raised TypeError on every
hover), and the History tab opens the store of the last start again (QSettings, as the window's other
settings). Records are made here; the repository is a real one made in a tmp dir."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.orchestration.history import open_store

from .test_history_order import quick_repo, records_of
from tests.helpers.gui import shown_window

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    monkeypatch.setenv("CMLENS_SETTINGS", str(tmp_path / "settings.ini"))     # this test's own settings
    repo = tmp_path / "repo"
    commits = quick_repo(repo)
    db = tmp_path / "history.db"
    with open_store(db) as s:
        for r in records_of(repo, commits, [0, 0, 1, 1]):
            s.add(r)
    return db, commits


def _window(qtbot):

    win = shown_window(qtbot, (1366, 768))
    return win


def test_hovering_a_point_shows_its_commit(qtbot, store: tuple[Path, list[str]]) -> None:
    """A mouse move over commit 3's point on the fallbacks chart: the view box's tooltip names it. Before
    the fix the hover raised TypeError inside Qt's event (pytest-qt fails the test on it)."""
    import pyqtgraph as pg
    from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    db, commits = store
    win = _window(qtbot)
    win.show_tab("history")
    view = win.history
    view.open_store(str(db))
    qtbot.waitUntil(lambda: view.data is not None, timeout=30_000)
    qtbot.wait(200)
    plot = next(p for p in view.charts.findChildren(pg.PlotWidget) if p.objectName() == "history:fallbacks")
    vb = plot.getPlotItem().getViewBox()
    where = plot.mapFromScene(vb.mapViewToScene(QPointF(2, 1)))         # commit 3, 1 fallback
    for dx in (-6, 0):                                                    # onto the point from beside it
        pos = QPointF(QPoint(where.x() + dx, where.y()))
        ev = QMouseEvent(QEvent.Type.MouseMove, pos, plot.viewport().mapToGlobal(pos), Qt.MouseButton.NoButton,
                         Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(plot.viewport(), ev)
        qtbot.wait(60)                                                     # pyqtgraph's hover rate limit
    tip = vb.toolTip()
    assert tip.startswith(commits[2][:8]) and "Add a LayerNorm" in tip and "fallbacks" in tip, tip
    win.shutdown()
    win.close()


def test_the_history_tab_reopens_the_store_of_the_last_start(qtbot, store: tuple[Path, list[str]]) -> None:
    db, commits = store
    win = _window(qtbot)
    win.show_tab("history")
    win.history.open_store(str(db))
    qtbot.waitUntil(lambda: win.history.data is not None, timeout=30_000)
    win.shutdown()
    win.close()                                     # the settings are written as the window closes, too

    again = _window(qtbot)
    assert again.history.store.text() == str(db)   # named at once; read when the tab is shown
    assert again.history.data is None
    again.show_tab("history")
    qtbot.waitUntil(lambda: again.history.data is not None, timeout=30_000)
    assert again.history.data.where == str(db) and [r.commit for r in again.history.data.history.records] == commits
    again.shutdown()
    again.close()


def test_a_remembered_store_that_is_gone_is_named_not_read(qtbot, store: tuple[Path, list[str]]) -> None:
    from app.runtime.settings import app_settings

    db, _commits = store
    s = app_settings()
    s.setValue("history/store", str(db.with_name("moved.db")))
    s.sync()
    win = _window(qtbot)
    win.show_tab("history")
    qtbot.wait(300)
    assert win.history.store.text().endswith("moved.db") and win.history.data is None
    assert not db.with_name("moved.db").exists()                 # nothing made where it was
    win.shutdown()
    win.close()


def test_a_password_is_not_remembered() -> None:
    from app.history.loading import without_password

    assert without_password("postgresql://ci:s3cret@db.example:5432/hist") == "postgresql://ci@db.example:5432/hist"
    assert without_password("/data/history.db") == "/data/history.db"
