"""The window's "Write reproducer…" row (issue 26): shown when ExecuTorch's own pass failed on the model,
hidden when only the pre-flight made --keep-going step in; it runs the repro Job in the job worker and
ends with a file that fails the same way in a fresh Python process."""
from __future__ import annotations

from pathlib import Path

from tests.helpers.gui import lower_and_wait

TESTS = Path(__file__).resolve().parents[1]
GHOSTLIKE = str(TESTS / "fixtures" / "models" / "ghostlike.py") + ":model"
ZEROS_MUL = str(TESTS / "preflight" / "models" / "float_operand_mul.py")


def test_a_kept_going_pass_failure_offers_a_reproducer_that_fails_the_same_way(qtbot, window, tmp_path) -> None:
    """GhostModule's pattern: AtenToCortexMPass fails, keep going lowers it with a workaround; the row
    writes the 2-op file and says a fresh process fails the same way."""
    assert lower_and_wait(qtbot, window, GHOSTLIKE) == "done"
    row = window.repro_row
    assert row.isVisible() and row.button.text() == "Write reproducer…"
    out = tmp_path / "repro_ghostlike.py"
    row.choose_path = lambda default: str(out)
    row.button.click()
    assert row.button.text() == "Cancel reproducer"
    qtbot.waitUntil(lambda: row.button.text() == "Write reproducer…" and not row.job_slot.has_processes(),
                    timeout=240_000)
    assert row.result is not None and row.result["reproduces"] is True, row.label.text()
    assert out.is_file() and "import cmlens" not in out.read_text()
    text = row.label.text()
    assert "Wrote" in text and str(out) in text and "fails the same way" in text
    assert "Cortex-M quantized_mul: broadcasting is not yet supported" in text


def test_no_reproducer_when_only_the_preflight_stepped_in(qtbot, window) -> None:
    """linear(x) * torch.zeros: every ExecuTorch pass succeeds (only the target would abort), so there is no
    ExecuTorch failure to file and the row stays hidden."""
    assert lower_and_wait(qtbot, window, ZEROS_MUL) == "done"
    assert window.session.verdicts.get("quarantined")
    assert not window.repro_row.isVisible()
