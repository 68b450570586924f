"""No text over text: every tab of the main window, filled with real results (tests/gui/filled.py), at
1366x768 (the most common laptop screen) and 1920x1080. No two visible text-bearing widgets overlap, no plot
text item leaves its view box or sits on another one, no plot legend covers a data point.

CMLENS_SCREENSHOT_DIR=dir also saves each tab's window as PNG there (docs/screenshots are made this way,
under Xvfb: see the README)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.gui.filled import fill_window
from tests.gui.overlap import plot_text_problems, widget_overlaps

SIZES = ((1366, 768), (1920, 1080))


def tab_views(win):
    """(name, show) for every tab the Details dock has, and every result tab of Run on target."""
    views = [(name, lambda n=name: win.show_tab(n)) for name in ("fallbacks", "quantizer", "log", "numerics",
                                                                  "memory")]
    panel = win.target_panel
    for i in range(panel.tabs.count()):
        label = panel.tabs.tabText(i).split(" (")[0].lower().replace(" ", "_").replace("-", "_")
        views.append((f"target_{label}", lambda k=i: (win.show_tab("target"), panel.tabs.setCurrentIndex(k))))
    return views


def problems_at(qtbot, win, size: tuple[int, int], model: str) -> list[str]:
    win.resize(*size)
    qtbot.wait(150)
    out = []
    shots = os.environ.get("CMLENS_SCREENSHOT_DIR")
    for name, show in tab_views(win):
        show()
        qtbot.wait(120)
        found = widget_overlaps(win) + plot_text_problems(win)
        out += [f"{size[0]}x{size[1]} {name}: {p}" for p in found]
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            win.grab().save(str(Path(shots) / f"{model}_{name}_{size[0]}x{size[1]}.png"))
    return out


@pytest.mark.parametrize("model", ["ds_cnn", "layernorm_mlp"])
def test_no_text_over_text_on_any_tab(qtbot, window, model) -> None:
    fill_window(qtbot, window, model)
    found = [p for size in SIZES for p in problems_at(qtbot, window, size, model)]
    assert not found, f"{len(found)} text overlap(s):\n" + "\n".join(found)
