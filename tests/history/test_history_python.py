"""`--python PATH`: the jobs run in worker processes under another interpreter (a second venv with another
ExecuTorch) and land as a series of their own (`... env=executorch-VERSION`), beside the default one.
Here the other interpreter is this venv's own python (the only ExecuTorch the project's passes run on
here), which proves the path, the labelling and the separate series."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .helpers import cli

pytestmark = pytest.mark.timeout(600)        # worker processes: a hang fails the test, never the suite


def test_another_python_is_a_series_of_its_own(model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    from importlib.metadata import version

    repo, commits = model_repo
    db = tmp_path / "envs.db"
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "2", "--calib", "1", "--executor", "local",
                         "--history", db)
    assert code == 0, err
    code, out, err = cli("history", "backfill", repo / "model.py", "--last", "2", "--calib", "1",
                         "--python", sys.executable, "--history", db)
    assert code == 0 and "recorded 2 commit(s) (0 failed to lower)" in out, out + err
    env = f"env=executorch-{version('executorch')}"
    from backend_core.orchestration.history import open_store

    with open_store(db) as store:
        series = {c: n for m, c, n in store.models() if m == "model.py"}
        other = store.records("model.py", f"cortex-m55 legacy int8 calib=1 {env}")
        base = store.records("model.py", "cortex-m55 legacy int8 calib=1")
    assert series == {"cortex-m55 legacy int8 calib=1": 2, f"cortex-m55 legacy int8 calib=1 {env}": 2}
    assert {r.commit for r in other} == set(commits[6:])
    assert [r.metrics["arena_bytes"] for r in other] == [r.metrics["arena_bytes"] for r in base]
    code, out, err = cli("history", "show", repo / "model.py", "--history", db)
    assert code == 0 and f"(--python env={env[4:]}): 2 commit(s)" in out, err   # side by side: two series
    assert "no figure differs" in out                               # the same ExecuTorch lowers the same
    code, out, err = cli("history", "show", repo / "model.py", "--history", db, "--config",
                         f"cortex-m55 legacy int8 calib=1 {env}")
    assert code == 0 and "2 commit(s)" in out, err
    code, _, err = cli("history", "backfill", repo / "model.py", "--last", "1", "--python", tmp_path / "nope",
                       "--history", db)
    assert code == 2 and "Cannot run --python" in err
