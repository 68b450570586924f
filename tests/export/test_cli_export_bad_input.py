"""`cmlens export` refuses bad input with a cause and a fix, exit 2, before any lowering and without
writing anything: an unknown board or CPU, a board whose core is not the CPU, a missing checkout, an
output folder that holds something else. And a model that does not fit the board is refused with the
verdict's numbers (which part, by how much)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from backend_core.common.errors import BadInputError
from backend_core.orchestration.jobs.steps.export import _refuse_unfit
from backend_core.target.memory import analyze_memory
from backend_core.target.memory.report import attach_board
from backend_core.common.boards.specs import custom_board
from backend_core.target.build.ops import program_bytes

BPTE = Path(__file__).resolve().parents[1] / "judge" / "fixtures" / "ds_cnn_m55.bpte"


def _export(tmp_path: Path, *extra: str) -> int:
    return main(["export", "ds_cnn", "-o", str(tmp_path / "bundle"), *extra])


@pytest.mark.parametrize("flags, words", [
    (["--board", "no-such-board", "--et-root", "/nonexistent/executorch"], "Unknown board"),
    (["--target", "cortex-m99", "--et-root", "/nonexistent/executorch"], "Unknown target"),
    (["--board", "stm32f746", "--target", "cortex-m55", "--et-root", "/nonexistent/executorch"], "lowered for cortex-m55"),
    (["--target", "cortex-m55", "--et-root", "/nonexistent/executorch"], "does not exist"),
])
def test_bad_flags_exit_2_and_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture, flags: list[str],
                                            words: str) -> None:
    assert _export(tmp_path, *flags) == 2
    err = capsys.readouterr().err
    assert words in err and "error:" in err
    assert list(tmp_path.iterdir()) == []


def test_no_checkout_at_all_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    assert _export(tmp_path, "--target", "cortex-m55") == 2
    err = capsys.readouterr().err
    assert "No ExecuTorch checkout" in err and "--et-root" in err
    assert list(tmp_path.iterdir()) == []


def test_folder_that_is_not_a_bundle_is_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    mine = tmp_path / "bundle"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert _export(tmp_path, "--target", "cortex-m55", "--et-root", "/nonexistent/executorch") == 2
    assert "not an earlier bundle" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"] and (mine / "notes.txt").read_text() == "mine"


def test_a_model_that_does_not_fit_is_refused_with_the_shortfall() -> None:
    rep = analyze_memory(program_bytes(BPTE.read_bytes()), target="cortex-m55")
    attach_board(rep, custom_board("16K", "256K"))
    with pytest.raises(BadInputError) as exc:
        _refuse_unfit(rep)
    msg = exc.value.message
    assert "does not fit" in msg and "RAM" in msg and "short by" in msg and "method allocator pool" in msg
    attach_board(rep, custom_board("1M", "2M"))
    _refuse_unfit(rep)                                      # fits: no error


def test_export_job_is_plain_data() -> None:
    """The window and the job worker receive the export as a Job (JSON both ways)."""
    from backend_core.orchestration.jobs import ExportOptions, Job, LowerRequest
    from backend_core.orchestration.jobs.steps.export import export_job

    job = export_job("ds_cnn", LowerRequest(target="cortex-m7"), "stm32f746",
                     ExportOptions(output="/tmp/b", check=True, command="cmlens export ds_cnn"), "/src/executorch", None)
    assert job.steps == ("lower", "check", "memory", "export")
    again = Job.from_dict(job.to_dict())
    assert again == job and again.export.check and again.run.et_root == "/src/executorch"
    assert job.key() != export_job("ds_cnn", LowerRequest(target="cortex-m7"), "stm32f746",
                                   ExportOptions(output="/tmp/other"), "/src/executorch", None).key()


def test_the_unknown_board_advice_is_accepted_by_export(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 44, item 10: the unknown-board message suggests `--ram 256K --flash 1M`; export took them as
    "unrecognized arguments" (argparse exit 2 with its usage). Now they parse and reach the next check (the
    checkout), and a bad size is refused by name before any lowering."""
    import re

    assert _export(tmp_path, "--board", "no-such-board", "--et-root", "/nonexistent/executorch") == 2
    advice = re.search(r"(--ram \S+ --flash \S+)", capsys.readouterr().err).group(1).rstrip(".").split()
    assert _export(tmp_path, *advice, "--et-root", "/nonexistent/executorch") == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments" not in err and "does not exist" in err
    assert _export(tmp_path, "--ram", "12Q", "--et-root", "/nonexistent/executorch") == 2
    assert "RAM size" in capsys.readouterr().err
    assert _export(tmp_path, "--board", "stm32f746", "--ram", "256K", "--et-root", "/nonexistent/executorch") == 2
    assert "--board and --ram/--flash both given" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
