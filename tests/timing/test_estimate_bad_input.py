"""`cmlens run --profile`'s cycle estimate refuses bad input with exit 2 and a message naming the cause and
the fix, before any lowering or build (no ExecuTorch checkout is needed to be refused): an unknown board
(the known ones listed), a core with no timing table (the known cores listed), a clock outside the core's
range, negative wait states, and an override without --profile."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main


@pytest.mark.parametrize("argv, words", [
    (["--board", "nosuch", "--profile"], ["Unknown board 'nosuch'", "stm32l4r5", "ra8d1"]),
    (["--board", "stm32l4r5", "--profile", "--clock-mhz", "900"],
     ["--clock-mhz 900 is outside the cortex-m4's range", "between 1 and 300 MHz"]),
    (["--target", "m3", "--profile", "--clock-mhz", "50"],
     ["No timing table for cortex-m3", "cortex-m33, cortex-m4, cortex-m55, cortex-m7, cortex-m85"]),
    (["--board", "stm32l4r5", "--profile", "--flash-wait-states", "-1"], ["--flash-wait-states -1 is negative"]),
    (["--board", "stm32l4r5", "--clock-mhz", "80"], ["--clock-mhz sets the cycle estimate of --profile",
                                                     "Add --profile"]),
])
def test_refused_with_exit_2_before_any_work(argv, words, tmp_path: Path, capsys) -> None:
    code = main(["run", "ds_cnn", *argv, "--et-root", str(tmp_path / "no-checkout")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert all(w in err for w in words), err
    assert "Traceback" not in err and "does not exist" not in err      # refused before the checkout is looked at
