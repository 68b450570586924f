"""One road (issue 37): the workers read a Job and nothing else, the window never starts the CLI or a worker
with arguments of its own, and no face builds another face's command line."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _sources(*folders: str) -> dict[Path, str]:
    return {p: p.read_text() for f in folders for p in (ROOT / f).rglob("*.py")}


def test_workers_parse_no_arguments_and_nothing_builds_them() -> None:
    workers = _sources("backend_core/orchestration/workers")
    assert [p.name for p in workers if p.name != "__init__.py"] == ["job.py"]
    assert not [p for p, text in workers.items() if "argparse" in text]
    everything = _sources("backend_core", "app")
    assert not [p for p, text in everything.items() if re.search(r"\w+_worker_arguments\b", text)]


def test_the_window_runs_no_cli_and_no_process_of_its_own() -> None:
    """Every window action is a Job submitted through app/runtime/qt_job.py; QProcess is not used at all."""
    gui = {p: t for p, t in _sources("app").items() if "/cli/" not in str(p)}
    assert not [p for p, t in gui.items() if "QProcess" in t]
    assert not [p for p, t in gui.items() if re.search(r"""["']app\.cli["']|-m", "app""", t)]
    starts_workers = [p.relative_to(ROOT).as_posix() for p, t in gui.items()
                      if "JOB_WORKER" in t or "backend_core.orchestration.execute" in t]
    assert starts_workers == ["app/runtime/qt_job.py"]
