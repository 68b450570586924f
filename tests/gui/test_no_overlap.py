"""No text over text: every tab of the main window, filled with real results (tests/gui/filled.py), at
1366x768 (the most common laptop screen) and 1920x1080. No two visible text-bearing widgets overlap, no plot
text item leaves its view box or sits on another one or on a point marker, no plot legend covers a data
point, no plot is empty axes.
(scripts/gui_screenshots.py makes the docs screenshots from the same filled window, under Xvfb.)"""
from __future__ import annotations

import pytest

from tests.gui.filled import fill_window, spin, tab_views
from tests.gui.overlap import plot_text_problems, widget_overlaps

SIZES = ((1366, 768), (1920, 1080))


def problems_at(win, size: tuple[int, int]) -> list[str]:
    win.resize(*size)
    spin(150)
    out = []
    for name, show in tab_views(win):
        show()
        spin(120)
        out += [f"{size[0]}x{size[1]} {name}: {p}" for p in widget_overlaps(win) + plot_text_problems(win)]
    return out


@pytest.mark.parametrize("model", ["ds_cnn", "layernorm_mlp"])
def test_no_text_over_text_on_any_tab(window, model) -> None:
    fill_window(window, model)
    if model == "layernorm_mlp":
        window.graph.next_fallback()          # a float layer selected: the numerics tab has no int8 grid for it
        spin(200)
    found = [p for size in SIZES for p in problems_at(window, size)]
    assert not found, f"{len(found)} text overlap(s):\n" + "\n".join(found)
