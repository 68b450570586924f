"""Output paths (issue 44, items 11-13): a folder that does not exist is a typo, refused before any lowering
(exit 2, naming it) and never created; one that cannot exist (a file in the way) likewise; a job whose
output cannot be written writes nothing and raises nothing; files get the mode `open()` would give them."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.cli import main
from backend_core.common.errors import BadInputError
from backend_core.common.files import check_writable, write_atomic


@pytest.fixture
def umask():
    """Set the process umask for one test, then put it back."""
    old = os.umask(0o022)
    yield lambda m: os.umask(m)
    os.umask(old)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_output_in_a_folder_that_cannot_be_made_exits_2_before_lowering(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("")
    code = main(["lower", "layernorm_mlp", "--json", str(blocker / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and "--json" in err and "is a file, not a folder" in err and "Traceback" not in err


def test_a_missing_folder_is_named_and_not_created(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match=f"the folder {tmp_path / 'typo'} does not exist"):
        check_writable(tmp_path / "typo" / "x.html", "html")
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "typo" / "x.html", "x")
    assert not (tmp_path / "typo").exists()


def test_atomic_writes_honour_the_umask_and_keep_an_existing_mode(tmp_path: Path, umask) -> None:
    """mkstemp's 0600 made every report private under umask 022: a CI artefact nobody else could read."""
    write_atomic(tmp_path / "a.json", "{}")
    assert _mode(tmp_path / "a.json") == 0o644
    umask(0o027)
    write_atomic(tmp_path / "b.json", b"{}")
    assert _mode(tmp_path / "b.json") == 0o640
    (tmp_path / "a.json").chmod(0o600)                 # replacing a file keeps its mode, as cp does
    write_atomic(tmp_path / "a.json", "[]")
    assert _mode(tmp_path / "a.json") == 0o600 and (tmp_path / "a.json").read_text() == "[]"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]     # no temporary file left


def test_a_job_whose_output_cannot_be_written_writes_nothing(tmp_path: Path) -> None:
    """The job road (the window, sweeps) too: exit 2, and no attempt to write the report afterwards (that
    attempt was the `KeyError: 'status'` of `--html /proc/x.html`)."""
    from backend_core.orchestration.jobs import Job, LowerRequest
    from backend_core.orchestration.jobs.execute_job import execute_job

    res = execute_job(Job("ds_cnn", LowerRequest(), outputs={"html": "/proc/cmlens-x.html",
                                                         "json": str(tmp_path / "r.json")}))
    assert res.status == "failed" and res.exit_code == 2 and "/proc" in res.error["message"]
    assert res.error["step"] == "outputs" and res.files == {} and not (tmp_path / "r.json").exists()


def test_a_job_that_fails_before_lowering_still_gets_a_readable_report(tmp_path: Path) -> None:
    """A bad --inputs of numerics fails before the lowering: the HTML says so (it raised KeyError)."""
    from backend_core.orchestration.jobs import Job, LowerRequest
    from backend_core.orchestration.jobs.execute_job import execute_job
    from backend_core.orchestration.jobs.spec import NumericsOptions

    res = execute_job(Job("ds_cnn", LowerRequest(), steps=("lower", "numerics"),
                      numerics=NumericsOptions(inputs=str(tmp_path / "no-such-inputs")),
                      outputs={"html": str(tmp_path / "r.html")}))
    assert res.status == "failed" and res.exit_code == 2
    page = (tmp_path / "r.html").read_text()
    assert "not lowered" in page and "no-such-inputs" in page


def test_cli_reports_and_programs_are_readable_by_the_group(tmp_path: Path, umask, capsys) -> None:
    """What a user writes with `cmlens lower` under umask 027: 0640, never 0600."""
    umask(0o027)
    files = {k: tmp_path / f"r.{k}" for k in ("json", "html", "pte", "bpte")}
    code = main(["lower", "layernorm_mlp", *(x for k, p in files.items() for x in (f"--{k}", str(p)))])
    assert code == 0, capsys.readouterr().err
    assert {k: oct(_mode(p)) for k, p in files.items()} == {k: "0o640" for k in files}
    assert oct(_mode(tmp_path / "r.references.json")) == "0o640"
