"""Pixels: the LayerNorm fallback is drawn red, in the window and in `cmlens gui --screenshot`."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QColor, QImage

from tests.helpers.gui import lower_and_wait, wait_scene

ROOT = Path(__file__).resolve().parents[2]
FALLBACK_RED = QColor("#e53935")


def _is_red(c: QColor) -> bool:
    return c.red() > 200 and c.green() < 90 and c.blue() < 90


def _red_pixels(img: QImage) -> int:
    n = 0
    for y in range(0, img.height(), 2):
        for x in range(0, img.width(), 2):
            if _is_red(img.pixelColor(x, y)):
                n += 1
    return n


def test_fallback_node_is_drawn_red(qtbot, window) -> None:
    lower_and_wait(qtbot, window, "layernorm_mlp")
    window.state.focus(window.session.final().index, "aten_native_layer_norm_default")
    wait_scene(qtbot, window)
    view = window.graph.view
    box = window.graph.current_scene().box_for_node("aten_native_layer_norm_default")
    rect = view.mapFromScene(box.mapRectToScene(box.rect)).boundingRect()
    img = window.grab().toImage()
    origin = view.viewport().mapTo(window, rect.topLeft())
    # sample inside the box, away from the label text: the left margin, middle height
    c = img.pixelColor(origin.x() + 10, origin.y() + rect.height() // 2)
    assert _is_red(c), c.name()
    # a CMSIS-NN node is not red
    lin = window.graph.current_scene().box_for_node("cortex_m_quantized_linear_default")
    r2 = view.mapFromScene(lin.mapRectToScene(lin.rect)).boundingRect()
    assert view.viewport().rect().contains(r2.center())
    p2 = view.viewport().mapTo(window, r2.topLeft())
    assert not _is_red(img.pixelColor(p2.x() + 10, p2.y() + r2.height() // 2))


def test_cli_screenshot_writes_png_with_the_red_fallback(tmp_path, gui_cache) -> None:
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", CMLENS_CACHE=str(gui_cache),
               CMLENS_SETTINGS=str(tmp_path / "s.ini"))
    proc = subprocess.run([sys.executable, "-m", "app.cli.gui", "layernorm_mlp", "--stage", "final",
                           "--select", "aten_native_layer_norm_default", "--screenshot", str(out),
                           "--size", "1300x800"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    img = QImage(str(out))
    assert img.width() >= 1300 and img.height() >= 800
    assert _red_pixels(img) > 300          # the red LayerNorm / clamp boxes and the red badge


def test_cli_unknown_stage_is_an_error(tmp_path, gui_cache) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", CMLENS_CACHE=str(gui_cache),
               CMLENS_SETTINGS=str(tmp_path / "s.ini"))
    proc = subprocess.run([sys.executable, "-m", "app.cli.gui", "layernorm_mlp", "--stage", "nope",
                           "--screenshot", str(tmp_path / "x.png")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "no stage matches" in proc.stderr
