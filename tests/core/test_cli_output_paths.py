"""`cmlens lower --json/--html` into a folder that does not exist creates it; one that cannot exist (a file
in the way) is a clear exit 2 before any lowering, not a traceback after it."""
from __future__ import annotations

from pathlib import Path

from app.cli import main


def test_output_in_a_folder_that_cannot_be_made_exits_2_before_lowering(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("")
    code = main(["lower", "layernorm_mlp", "--json", str(blocker / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and "--json" in err and "cannot be created" in err and "Traceback" not in err
