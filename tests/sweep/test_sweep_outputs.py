"""What a run sweep shows: the dashboard's run cells carry the verdict (bit-exact), read from two real
result rows of the MLPerf Tiny × 4 CPUs run sweep on QEMU (tests/sweep/fixtures/mlperf_run_rows.json);
and the progress line of an executor that is given every job at once (Dask)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from backend_core.orchestration.jobs import Job, JobResult
from backend_core.orchestration.sweep.outputs import write_outputs
from backend_core.orchestration.sweep.run import Progress
from backend_core.orchestration.sweep.store import SweepStore

ROWS = Path(__file__).parent / "fixtures" / "mlperf_run_rows.json"


def _recorded() -> tuple[list[tuple[str, Job]], dict[str, dict]]:
    results = json.loads(ROWS.read_text())["results"]
    ids = sorted(((jid, Job.from_dict(r["job"])) for jid, r in results.items()), key=lambda t: t[1].label)
    return ids, results


def test_result_summary_names_the_verdict() -> None:
    _, results = _recorded()
    by = {r["job"]["label"]: JobResult.from_dict(r).summary() for r in results.values()}
    # resnet8's lowered program differs from the fake-quant model by one step; the target matched the
    # lowered program bit for bit, which is what the run cell is about
    assert by["resnet8 · m4"]["verdict"] == "PASS, bit-exact"
    assert by["ds_cnn · m4"]["verdict"] == "PASS, bit-exact"
    assert by["ds_cnn · m4"]["outcome"] == "PASS"


def test_dashboard_run_cells_show_the_verdict_in_a_browser(tmp_path: Path) -> None:
    from tests.report.browser import Browser, find_chromium

    if find_chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (CI installs it: scripts/install_sysdeps.sh)")
        pytest.skip("chromium is not installed")
    ids, results = _recorded()
    store = SweepStore(tmp_path / "sweep")
    for jid, res in results.items():
        store.write_result(jid, res)
    write_outputs(store, ids, results)
    with Browser(1366, 768) as b:
        b.open((tmp_path / "sweep" / "dashboard.html").as_uri(),
               ready="document.querySelectorAll('#rows tr').length > 0")
        assert b.eval("document.getElementById('metric').value") == "outcome"    # a run sweep's matrix: verdicts
        cells = b.eval("[...document.querySelectorAll('#pivot td:not(:first-child)')].map(td => td.textContent)")
        assert cells == ["PASS, bit-exact"] * len(cells) and cells
        col = b.eval("[...document.querySelectorAll('#head th')].findIndex(th => th.textContent === 'run')")
        runs = b.eval(f"[...document.querySelectorAll('#rows tr')].map(tr => [tr.cells[0].textContent, "
                      f"tr.cells[{col}].textContent, tr.cells[{col}].title])")
        by = {label: (text, title) for label, text, title in runs}
        assert by["ds_cnn · m4"][0] == by["resnet8 · m4"][0] == "PASS, bit-exact"
        assert "target == lowered program bit for bit" in by["resnet8 · m4"][1]
        assert "lowered vs fake-quant: max 1 step" in by["resnet8 · m4"][1]      # the tooltip keeps the rest
        assert b.errors == []


def test_progress_counts_queued_jobs_apart_and_estimates_from_throughput() -> None:
    """A Dask client is given all 16 jobs at once: 2 workers run 2, the others wait. The line says so,
    and the ETA comes from jobs finished per second (a queued job's time since submission is no job time)."""
    p = Progress(16, parallel=2, since=time.monotonic() - 100.0)
    p.running = {f"j{i}" for i in range(12)}
    p.done = 4
    line = p.line()
    assert "4 done, 2 running, 10 queued, 0 failed" in line, line
    eta = p.eta_s()
    assert eta is not None and 299.0 < eta < 301.0          # 100 s for 4 jobs, 12 left
    assert Progress(4, parallel=2).eta_s() is None           # nothing finished yet: no guess


def test_sweep_tab_sorts_and_shows_the_verdict(qtbot, tmp_path: Path) -> None:
    """The app's Sweep tab on the recorded rows: each column sorts both ways (its sort keys were tuples,
    which Qt cannot compare: the table stayed in file order), and the run cell says the verdict."""
    from PySide6.QtCore import Qt

    from app.sweep.view import SweepView

    ids, results = _recorded()
    store = SweepStore(tmp_path / "sweep")
    store.write_manifest(ids, {"executor": "recorded"})
    for jid, res in results.items():
        store.write_result(jid, res)
    view = SweepView()
    qtbot.addWidget(view)
    view.open_folder(tmp_path / "sweep")
    headers = [view.model.headerData(c, Qt.Orientation.Horizontal) for c in range(view.model.columnCount())]

    def column(name: str, order: Qt.SortOrder) -> list[str]:
        view.table.sortByColumn(headers.index(name), order)
        return [view.proxy.index(r, headers.index(name)).data() for r in range(view.proxy.rowCount())]

    assert column("job", Qt.SortOrder.AscendingOrder) == ["ds_cnn · m4", "resnet8 · m4"]
    assert column("job", Qt.SortOrder.DescendingOrder) == ["resnet8 · m4", "ds_cnn · m4"]
    assert column("arena B", Qt.SortOrder.AscendingOrder) == ["16,000", "49,728"]
    assert column("arena B", Qt.SortOrder.DescendingOrder) == ["49,728", "16,000"]
    run = headers.index("run")
    assert [view.proxy.index(r, run).data() for r in range(2)] == ["PASS, bit-exact"] * 2
    tips = [view.proxy.index(r, run).data(Qt.ItemDataRole.ToolTipRole) for r in range(2)]
    assert any("lowered vs fake-quant: max 1 step" in t for t in tips)
