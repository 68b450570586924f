"""Writes a graph scene to a PNG or SVG file (File > Export, `cmlens gui --screenshot`-style
exports), independent of the view's zoom."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter

from app.graph.scene import GraphScene


def render_scene_image(scene: GraphScene, path: str) -> str:
    """Write the whole scene as PNG or SVG (by suffix); returns the path."""
    r = scene.sceneRect()
    if path.lower().endswith(".svg"):
        from PySide6.QtSvg import QSvgGenerator

        gen = QSvgGenerator()
        gen.setFileName(path)
        gen.setSize(r.size().toSize())
        gen.setViewBox(QRectF(0, 0, r.width(), r.height()))
        gen.setTitle(f"{scene.snapshot.stage}")
        p = QPainter(gen)
        scene.render(p, QRectF(0, 0, r.width(), r.height()), r)
        p.end()
        return path
    k = min(2.0, 12000 / max(r.width(), r.height(), 1))
    img = QImage(int(r.width() * k), int(r.height() * k), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.white)
    p = QPainter(img)
    p.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    scene.render(p, QRectF(0, 0, img.width(), img.height()), r)
    p.end()
    if not img.save(path):
        raise RuntimeError(f"Could not write {path}")
    return path
