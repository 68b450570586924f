"""File > Export > Firmware bundle (issue 36): the window exports the lowering on screen as the Job
`cmlens export` submits (the same Job for the same request), in the job worker. Without a checkout the
cause comes back and nothing is written; with one (opt-in) the bundle folder is written."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.gui import lower_and_wait

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


def _window(qtbot):  # noqa: ANN202
    from app.shell.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    assert lower_and_wait(qtbot, win, "ds_cnn", target="cortex-m55") == "done"
    return win


def test_the_windows_bundle_is_the_clis_export_job_and_says_why_it_failed(qtbot, tmp_path: Path, monkeypatch) -> None:
    from app.cli import build_parser
    from app.cli.export import export_job_from  # the CLI's own parse -> Job

    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    win = _window(qtbot)
    win.target_panel.et_root.setText("")
    out = tmp_path / "ds_cnn_bundle"
    with qtbot.waitSignal(win.exporter.exported, timeout=120_000) as blocker:
        job = win.exporter.export_bundle(str(out), "", "")
    kind, folder, err = blocker.args
    assert kind == "bundle" and "No ExecuTorch checkout" in err and not out.exists()
    assert "No ExecuTorch checkout" in win.statusBar().currentMessage()
    cli = export_job_from(build_parser().parse_args(["export", "ds_cnn", "--target", "m55", "-o", str(out),
                                                     "--keep-going"]))
    assert (job.model, job.lower, job.steps, job.export.output) == (cli.model, cli.lower, cli.steps, cli.export.output)
    win.shutdown()
    win.close()


@pytest.mark.skipif(not os.environ.get("CMLENS_TEST_ET_ROOT"), reason="opt-in: needs an ExecuTorch checkout "
                    "(CMLENS_TEST_ET_ROOT, CMLENS_TEST_CMSIS_NN); CI has none")
def test_the_window_writes_the_bundle_with_a_checkout(qtbot, tmp_path: Path) -> None:
    win = _window(qtbot)
    out = tmp_path / "ds_cnn_bundle"
    with qtbot.waitSignal(win.exporter.exported, timeout=300_000) as blocker:
        win.exporter.export_bundle(str(out), os.environ["CMLENS_TEST_ET_ROOT"], os.environ.get("CMLENS_TEST_CMSIS_NN", ""))
    assert blocker.args[2] == "", blocker.args
    assert (out / "model_pte.h").is_file() and (out / "cmlens_model.h").is_file() and (out / "bundle.json").is_file()
    assert "Wrote the firmware bundle" in win.statusBar().currentMessage()
    win.shutdown()
    win.close()
