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


DARK_CHILD = r"""
import json, sys
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
app.setStyle("Fusion")
from tests.gui.filled import dark_palette, spin, tab_views
app.setPalette(dark_palette())                 # before the views are imported: theme reads it then
from app.widgets import theme
app.setStyleSheet(theme.app_style_sheet())
from app.shell.main_window import MainWindow
from tests.gui.overlap import low_contrast, plot_text_problems, widget_overlaps
win = MainWindow(); win.resize(1366, 768); win.show(); spin(400)
out = {"dark": theme.is_dark_palette(), "problems": []}
for name, show in tab_views(win):
    show(); spin(60)
    out["problems"] += [f"{name}: {p}" for p in widget_overlaps(win) + plot_text_problems(win) + low_contrast(win)]
img = win.graph.legend.grab().toImage()          # the folded legend chip on the white graph
mid = img.height() // 2                          # the text's band, inside the box's frame and corners
out["chip_darkest"] = min(QColor(img.pixel(x, y)).lightness() for x in range(8, img.width() - 8)
                          for y in range(mid - 4, mid + 4))
win.close(); spin(100); win.shutdown()
print("RESULT " + json.dumps(out))
"""


def test_dark_palette_window_has_no_text_over_text_and_readable_text(tmp_path) -> None:
    """A dark system palette (Fusion, as a dark desktop theme gives Qt), in a fresh process because the
    theme picks its colours when the views are imported: every tab of a 1366x768 window (before any model:
    placeholders, forms) has no text over text, every label and text view keeps a contrast >= 3 with its
    background, and the legend chip on the white graph is drawn with dark text."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", CMLENS_SETTINGS=str(tmp_path / "s.ini"))
    run = subprocess.run([sys.executable, "-c", DARK_CHILD], cwd=root, env=env, capture_output=True, text=True,
                         timeout=120)
    line = next((x for x in run.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, run.stderr[-3000:]
    out = json.loads(line[7:])
    assert out["dark"]
    assert not out["problems"], "\n".join(out["problems"])
    assert out["chip_darkest"] < 100, out
