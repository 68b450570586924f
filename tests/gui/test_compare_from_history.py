"""The Compare tab opened by the History tab (issue 44, item 15): its status line says what it shows (the
sides, the matched ops, the fallback deltas), not "No compare yet: Tools > Compare with…" above a compare.
A real `cmlens compare --json --with-reports` of the tiny_net v1/v2 fixtures in a child process (the GUI
process never imports torch), handed to the real window the way the History tab hands a change's compare."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parents[1] / "compare" / "models"
ROOT = Path(__file__).resolve().parents[2]


def test_compare_opened_from_history_says_what_it_shows(window, qtbot, tmp_path: Path) -> None:
    pytest.importorskip("executorch")
    out = tmp_path / "cmp.json"
    proc = subprocess.run([sys.executable, "-m", "app.cli", "compare", str(MODELS / "v1" / "tiny_net.py"),
                           str(MODELS / "v2" / "tiny_net.py"), "--json", str(out), "--with-reports"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "No compare yet" in window.compare.status.text()           # nothing compared yet: the hint
    window.show_tab("history")
    window.history.changeOpened.emit(json.loads(out.read_text()))     # what a click on a change emits
    qtbot.waitUntil(lambda: all(p.scene is not None for p in window.compare.panes), timeout=60_000)
    assert window.tabs.currentWidget() is window.compare and len(window.compare.panes) == 2
    text = window.compare.status.text()
    assert "No compare yet" not in text, text
    assert text.startswith("2 sides") and "+1 / -0 fallbacks" in text, text
