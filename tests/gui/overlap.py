"""Text over text, found from the widgets and the plot items themselves (no pixels): the rectangles on
screen of every visible widget that shows text, clipped by its ancestors, must not intersect; every
pyqtgraph TextItem (annotations, InfiniteLine labels) must lie inside its ViewBox, clear of the others and
of the plot's point markers; a plot legend must not cover a data point; a visible plot is not empty axes."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtWidgets import (QAbstractButton, QAbstractScrollArea, QComboBox, QLabel, QLineEdit, QProgressBar,
                               QScrollArea, QTabBar, QWidget)


@dataclass(frozen=True)
class TextBox:
    what: str
    rect: QRect            # window coordinates, clipped by every ancestor


def _name(w: QWidget) -> str:
    text = ""
    if isinstance(w, QLabel):
        text = w.text()
    elif isinstance(w, QAbstractButton):
        text = w.text()
    elif isinstance(w, QComboBox):
        text = w.currentText()
    elif isinstance(w, QLineEdit):
        text = w.text() or w.placeholderText()
    text = " ".join(text.split())
    return f"{type(w).__name__}({w.objectName() or ''}{':' if w.objectName() else ''}{text[:60]!r})"


def _has_text(w: QWidget) -> bool:
    if isinstance(w, QLabel):
        return bool(w.text().strip()) or w.pixmap() is not None and not w.pixmap().isNull()
    if isinstance(w, QAbstractButton):
        return bool(w.text().strip())
    if isinstance(w, QProgressBar):
        return w.isTextVisible()
    if isinstance(w, QTabBar):
        return w.count() > 0
    if isinstance(w, QScrollArea):
        return False                   # a container: its contents are checked
    if isinstance(w, (QComboBox, QLineEdit, QAbstractScrollArea)):
        return True                    # text fields, tables, text browsers, plots, the graph
    return type(w).__name__ in ("Legend", "HeatLegend", "ColorBar")


def visible_rect(w: QWidget, top: QWidget) -> QRect:
    """The part of `w` on screen, in `top`'s coordinates (clipped by every ancestor up to `top`)."""
    rect = QRect(w.mapTo(top, w.rect().topLeft()), w.size())
    p = w.parentWidget()
    while p is not None and p is not top:
        rect = rect.intersected(QRect(p.mapTo(top, p.rect().topLeft()), p.size()))
        p = p.parentWidget()
    return rect.intersected(top.rect())


def text_boxes(top: QWidget) -> list[TextBox]:
    """Visible text-bearing widgets under `top` that are not inside another one (a combo's line edit,
    a text browser's viewport and a tab bar's scroll buttons belong to their owner)."""
    out: list[TextBox] = []

    def walk(w: QWidget) -> None:
        for c in w.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if not c.isVisible() or c.isWindow():
                continue
            if _has_text(c):
                r = visible_rect(c, top)
                if r.width() > 0 and r.height() > 0:
                    out.append(TextBox(_name(c), r))
            else:
                walk(c)

    walk(top)
    return out


def widget_overlaps(top: QWidget) -> list[str]:
    """Pairs of visible text widgets whose on-screen rectangles intersect (by at least 2 px each way)."""
    boxes = text_boxes(top)
    bad = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            x = a.rect.intersected(b.rect)
            if x.width() > 1 and x.height() > 1:
                bad.append(f"{a.what} {_r(a.rect)} overlaps {b.what} {_r(b.rect)}")
    return bad


def _r(r: QRect | QRectF) -> str:
    return f"[{r.x():.0f},{r.y():.0f} {r.width():.0f}x{r.height():.0f}]"


def _plot_items(top: QWidget) -> list:
    import pyqtgraph as pg

    plots = []
    for gv in top.findChildren(pg.GraphicsView):
        if not gv.isVisible() or visible_rect(gv, top).isEmpty():
            continue
        for it in gv.scene().items():
            if isinstance(it, pg.PlotItem) and it.isVisible():
                plots.append((gv, it))
    return plots


def plot_text_problems(top: QWidget) -> list[str]:
    """TextItems outside their ViewBox or on top of each other; legends over data points."""
    import pyqtgraph as pg

    bad = []
    for gv, plot in _plot_items(top):
        vb = plot.getViewBox()
        vb_rect = vb.sceneBoundingRect()
        where = f"plot {plot.titleLabel.text or ''!r} in {type(gv.parentWidget()).__name__}"
        texts = [it for it in vb.scene().items() if isinstance(it, pg.TextItem) and it.isVisible()
                 and _in_viewbox(it, vb) and it.toPlainText().strip()]
        rects = [(it, it.sceneBoundingRect()) for it in texts]
        for it, r in rects:
            if not vb_rect.adjusted(-1, -1, 1, 1).contains(r):
                bad.append(f"{where}: text {it.toPlainText()!r} {_r(r)} leaves its view box {_r(vb_rect)}")
        for i, (a, ra) in enumerate(rects):
            for b, rb in rects[i + 1:]:
                x = ra.intersected(rb)
                if x.width() > 1 and x.height() > 1:
                    bad.append(f"{where}: text {a.toPlainText()!r} {_r(ra)} overlaps {b.toPlainText()!r} {_r(rb)}")
        for _it, r in rects:
            hit = _marker_under(vb, r)
            if hit:
                bad.append(f"{where}: text {_it.toPlainText()!r} {_r(r)} covers a marker at {hit}")
        if not _has_data(vb):
            bad.append(f"{where}: empty axes (no data drawn; a placeholder line should say what comes here)")
        legend = plot.legend
        if legend is not None and legend.isVisible() and legend.items:
            lr = legend.sceneBoundingRect()
            for _it, r in rects:
                x = lr.intersected(r)
                if x.width() > 1 and x.height() > 1:
                    bad.append(f"{where}: legend {_r(lr)} overlaps a text item {_r(r)}")
            for item in plot.listDataItems():
                xs, ys = item.getData()
                if xs is None:
                    continue
                for x, y in zip(xs, ys):
                    p = vb.mapViewToScene(QPointF(float(x), float(y)))
                    if lr.contains(p):
                        bad.append(f"{where}: legend {_r(lr)} covers a data point ({x:g}, {y:g})")
                        break
    return bad


def _in_viewbox(item, vb) -> bool:
    p = item.parentItem()
    while p is not None:
        if p is vb:
            return True
        p = p.parentItem()
    return False


def _in_vb(item, vb) -> bool:
    return item.isVisible() and _in_viewbox(item, vb)


def _marker_under(vb, rect: QRectF) -> str:
    """The first scatter marker (a point the user can hover or click) that `rect` covers, as 'x, y'."""
    import pyqtgraph as pg

    for sp in vb.scene().items():
        if not isinstance(sp, pg.ScatterPlotItem) or not _in_vb(sp, vb):
            continue
        for pt in sp.points():
            if not pt.isVisible():
                continue
            size = pt.size() if pt.size() >= 0 else sp.opts["size"]
            half = max(float(size), 4.0) / 2
            c = sp.mapToScene(pt.pos())
            box = QRectF(c.x() - half, c.y() - half, 2 * half, 2 * half)
            x = box.intersected(rect)
            if x.width() > 1 and x.height() > 1:
                return f"({pt.pos().x():g}, {pt.pos().y():g})"
    return ""


def _has_data(vb) -> bool:
    """Something drawn from data in the view box (lines, markers, bars, images), not only guides."""
    import pyqtgraph as pg

    for it in vb.addedItems:
        if not it.isVisible() or isinstance(it, (pg.InfiniteLine, pg.TextItem, pg.LinearRegionItem)):
            continue
        if isinstance(it, pg.ScatterPlotItem):
            if len(it.points()):
                return True
        elif isinstance(it, (pg.PlotDataItem, pg.PlotCurveItem)):
            xs, _ys = it.getData()
            if xs is not None and len(xs):
                return True
        elif not it.boundingRect().isEmpty():
            return True
    return False


def _luminance(c) -> float:
    def ch(v: int) -> float:
        x = v / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.red()) + 0.7152 * ch(c.green()) + 0.0722 * ch(c.blue())


def contrast(a, b) -> float:
    """WCAG contrast ratio of two QColors (1 .. 21; 3 is the floor for UI text)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def low_contrast(top: QWidget, floor: float = 3.0) -> list[str]:
    """Visible labels whose text colour is too close to their background, and text views
    (browsers, logs) whose text is too close to their base (rich-text spans' own colours are not seen)."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

    bad = []
    for w in top.findChildren(QWidget):
        if not w.isVisible() or visible_rect(w, top).isEmpty():
            continue
        pal = w.palette()
        if isinstance(w, (QTextEdit, QPlainTextEdit)):
            fg, bg = pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base)
        elif isinstance(w, QLabel) and w.text().strip():
            fg, bg = pal.color(w.foregroundRole()), pal.color(w.backgroundRole())
        else:
            continue
        if contrast(fg, bg) < floor:
            bad.append(f"{_name(w)}: text {fg.name()} on {bg.name()} (contrast {contrast(fg, bg):.1f} < {floor})")
    return bad
