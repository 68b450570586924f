"""Each cause of failure has one exit code, and the README's table is the one the code uses."""
from __future__ import annotations

import re
from pathlib import Path

from backend_core.common.errors import (EXIT_CODES, BadInputError, BuildError, Cancelled, SimulatorError,
                                 StageFailedError, ToolMissingError, UnsupportedTargetError, exit_code_table)

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_table_is_generated_from_the_code() -> None:
    text = README.read_text()
    m = re.search(r"<!-- exit-codes[^>]*-->\n(.*?)\n<!-- /exit-codes -->", text, re.S)
    assert m, "README has no generated exit-code table"
    assert m.group(1).strip() == exit_code_table(), "README's exit codes differ: python -m backend_core.common.errors"


def test_every_error_type_exits_with_its_cause_code() -> None:
    for code, _, types in EXIT_CODES:
        for t in types:
            assert t.exit_code == code, t
    for t, code in ((ToolMissingError, 2), (UnsupportedTargetError, 2), (BadInputError, 2), (StageFailedError, 3),
                    (BuildError, 3), (SimulatorError, 3), (Cancelled, 130)):
        assert t.exit_code == code


def test_a_failed_lowering_is_exit_3_in_every_command(tmp_path: Path, capsys) -> None:
    """ExecuTorch failing on the model is a stage failure (3) whichever command met it, never bad input."""
    from app.cli import main

    model = tmp_path / "fails.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        if x.sum() > 0:\n"                  # data-dependent control flow: torch.export fails
        "            return x * 2\n"
        "        return x\n"
        "def get_model():\n    return M()\n"
        "def get_example_inputs():\n    return (torch.rand(1, 4),)\n")
    for argv in (["lower", str(model)], ["check", str(model)], ["memory", str(model)],
                 ["numerics", str(model), "--inputs", "1"]):
        assert main(argv) == 3, (argv, capsys.readouterr().err)
