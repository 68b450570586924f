"""`--record` on the commands that run jobs: `cmlens sweep --record` (results from a worker process, without
graphs) and the helper every command calls (`record_if_asked`), keyed by the model repository's HEAD."""
from __future__ import annotations

import argparse
import io
from pathlib import Path

from .helpers import cli


def test_sweep_record_lands_per_configuration(model_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, commits = model_repo
    db = tmp_path / "sweep.db"
    code, out, err = cli("sweep", repo / "model.py", "--vary", "target=m4,m55", "--workers", "1",
                         "--out", tmp_path / "sw", "--record", "--history", db)
    assert code == 0, out + err
    assert err.count("recorded model.py @ " + commits[7][:8]) == 2
    from backend_core.orchestration.history import open_store

    with open_store(db) as store:
        recs = {r.config: r for r in store.records("model.py")}
    assert set(recs) == {"cortex-m4 legacy int8", "cortex-m55 legacy int8"}
    assert all(r.source == "sweep" and r.metrics["fallbacks"] == 1 and r.metrics["arena_bytes"] > 0
               for r in recs.values())


def test_record_if_asked_names_a_model_outside_git(tmp_path: Path) -> None:
    from app.cli.history_flags import add_record_flags, record_if_asked
    from backend_core.orchestration.jobs import Job, JobResult

    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    add_record_flags(ap)
    loose = tmp_path / "m.py"
    loose.write_text("x = 1\n")
    args = ap.parse_args([str(loose), "--history", str(tmp_path / "h.db")])
    err = io.StringIO()
    code = record_if_asked(args, JobResult(Job(str(loose)), status="done"), out=err)
    assert code == 2 and "not recorded" in err.getvalue() and "not inside a git repository" in err.getvalue()
    assert not (tmp_path / "h.db").exists()
    assert record_if_asked(ap.parse_args([str(loose)]), JobResult(Job(str(loose))), out=err) == 0   # not asked
