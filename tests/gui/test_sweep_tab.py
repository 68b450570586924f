"""A sweep folder opens as a table in the app (real sweep, real jobs); double-clicking a row lowers that
job's model with its options; a folder that is not a sweep says so and keeps the table."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

MLP = Path(__file__).resolve().parents[1] / "sweep" / "models" / "mlp_layernorm.py"


def test_sweep_folder_opens_as_a_table_and_a_row_opens_its_lowering(window, qtbot, tmp_path: Path) -> None:
    from backend_core.orchestration.execute.pool import LocalPoolExecutor as LocalPool
    from backend_core.orchestration.sweep import build_jobs, parse_vary, run_sweep

    out = tmp_path / "sweep"
    run_sweep(build_jobs([str(MLP)], parse_vary(["target=m4,m55"]), ("lower", "memory")), out, LocalPool(1))
    window.open_sweep(str(out))
    view = window.sweep
    assert window.tabs.currentWidget() is view
    assert view.proxy.rowCount() == 2 and "2 jobs, 2 done, 0 failed" in view.info.text()
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())]
    fallbacks = headers.index("fallbacks")
    assert int(view.proxy.index(0, fallbacks).data()) >= 1               # the LayerNorm falls back on each CPU
    view.filter.setText("m55")
    assert view.proxy.rowCount() == 1
    rect = view.table.visualRect(view.proxy.index(0, 0))
    with qtbot.waitSignal(window.session.finished, timeout=300_000) as blocker:
        # a real double-click is press, release, double-click (Qt's item views need the press first)
        qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == ["done"]
    assert window.model_bar.current_source() == str(MLP)
    assert "cortex-m55" in window.windowTitle() and window.session.fallbacks()
    view.open_folder(tmp_path)                                        # not a sweep folder
    assert "not a sweep folder" in view.info.text() and view.proxy.rowCount() == 1
