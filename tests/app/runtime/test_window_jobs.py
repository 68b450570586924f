"""The window's lowering and compare are Jobs on the executor (issue 37): the window submits, through its
one adapter over the worker-process executor, exactly the Job the CLI builds for the same request, and
the worker it starts is the job worker."""
from __future__ import annotations

import sys

import pytest

from backend_core.common import protocol

pytestmark = pytest.mark.usefixtures("no_leftover_processes")


def test_the_windows_lowering_and_compare_are_the_clis_jobs(qtbot) -> None:
    from app.cli import build_parser
    from app.cli.lower import lower_job
    from app.compare.view import CompareView
    from app.shell.main_window import MainWindow
    from backend_core.orchestration.compare.sides import auto_labels, expand_vary, parse_side, side_job

    win = MainWindow()
    qtbot.addWidget(win)
    win.open_model("layernorm_mlp", "cortex-m4")
    assert win.session.worker.process_args() == [sys.executable, "-m", protocol.JOB_WORKER]
    with qtbot.waitSignal(win.session.finished, timeout=300_000):
        pass
    assert win.session.status == "done" and win.session.memory and win.session.memory["arena_bytes"] > 0
    window_job = win.session.worker.job
    cli_job = lower_job(build_parser().parse_args(["lower", "layernorm_mlp", "--target", "m4", "--keep-going"]))
    assert (window_job.model, window_job.lower) == (cli_job.model, cli_job.lower)
    assert window_job.steps == ("lower", "memory")

    view = CompareView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.side_jobs.finished, timeout=300_000):
        view.start(["layernorm_mlp@m4", "--vary", "activations=int8,int16"])
    specs = expand_vary([parse_side("layernorm_mlp@m4")], ["activations=int8,int16"])
    assert [j.to_dict() for j in view.side_jobs.jobs] == [side_job(s).to_dict() for s in specs]
    assert [s["label"] for s in view.data.raw["sides"]] == auto_labels(specs)
    view.shutdown()
    win.shutdown()
    win.close()
