"""QGraphicsItems of the graph view: nodes, collapsed groups, module clusters and edges.

Items paint themselves with a level of detail: below ~35 % zoom only coloured boxes and
lines are drawn (a fit-to-view frame of a 600-node graph stays well under 16 ms).
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from backend_core.analyses.graph_layout import LINE_H, PAD_Y, EdgeRoute, ViewCluster, ViewItem
from backend_core.common.snapshot.model import KIND_FALLBACK

from app.widgets import theme

TEXT_LOD = 0.38          # below this zoom, no text
EDGE_LABEL_LOD = 0.75    # below this zoom, no edge labels

_TITLE = theme.label_font(11, bold=True)
_BODY = theme.label_font(10)
_SMALL = theme.label_font(9)
_CLUSTER = theme.label_font(10, bold=True)


def _lod(painter: QPainter, option: QStyleOptionGraphicsItem) -> float:
    return option.levelOfDetailFromTransform(painter.worldTransform())


def _warning_path(cx: float, cy: float, r: float) -> QPainterPath:
    p = QPainterPath()
    p.moveTo(cx, cy - r)
    p.lineTo(cx + r * 1.1, cy + r * 0.9)
    p.lineTo(cx - r * 1.1, cy + r * 0.9)
    p.closeSubpath()
    return p


class BoxItem(QGraphicsItem):
    """A node or a collapsed group: a rounded box with up to three label lines."""

    def __init__(self, item: ViewItem, rect: QRectF) -> None:
        super().__init__()
        self.view_item = item
        self.rect = QRectF(0, 0, rect.width(), rect.height())
        self.setPos(rect.topLeft())
        self.setZValue(2)
        self.selected = False
        self.overlay = ""            # "" | added | removed | rewritten | modified
        self.match = False
        self.heat_on = False         # heat overlay (numerics): fill by error instead of kind
        self.heat: QColor | None = None
        fill, border, text = theme.kind_colors(item.kind)
        self._fill, self._border, self._text = fill, border, text
        self._is_fallback = item.kind == KIND_FALLBACK or item.fallbacks > 0
        self.preflight = ""          # "will fail" | "may fail": a pre-flight finding on this node
        self.patches = 0             # > 0: the op runs once per patch of a schedule (this many patches)
        self.patch_grid: tuple[int, int] | None = None   # the input node: the schedule's P×Q grid drawn on it
        self.setAcceptHoverEvents(False)
        self.setCacheMode(QGraphicsItem.CacheMode.NoCache)

    @property
    def item_id(self) -> str:
        return self.view_item.id

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        return self.rect.adjusted(-6, -10, 10, 8)

    def set_state(self, *, selected: bool | None = None, overlay: str | None = None,
                  match: bool | None = None) -> None:
        changed = False
        for name, value in (("selected", selected), ("overlay", overlay), ("match", match)):
            if value is not None and getattr(self, name) != value:
                setattr(self, name, value)
                changed = True
        if changed:
            self.update()

    def set_heat(self, on: bool, color: QColor | None) -> None:
        same = (color is None and self.heat is None) or (
            color is not None and self.heat is not None and color.rgba() == self.heat.rgba())
        if on != self.heat_on or not same:
            self.heat_on, self.heat = on, color
            self.update()

    def colors(self) -> tuple[QColor, QColor]:
        """(fill, text) as painted now: by kind, or by error under the heat overlay."""
        if self.heat_on:
            if self.heat is None:          # no numerics for this node: fade it out
                return theme.HEAT_NONE_FILL, theme.HEAT_NONE_TEXT
            dark = self.heat.lightnessF() < 0.55
            return self.heat, QColor("#ffffff") if dark else QColor("#1a1a1a")
        if self.view_item.is_group and self._is_fallback:
            return QColor("#ffebee"), QColor("#b71c1c")
        return self._fill, self._text

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        lod = _lod(painter, option)
        r = self.rect
        ghost = self.overlay == "removed"
        if ghost:
            painter.setOpacity(0.45)
        fill, text = self.colors()
        pen = QPen(self._border, 1.2)
        if self.view_item.is_group:
            pen.setStyle(Qt.PenStyle.DashLine)
        if lod < TEXT_LOD:
            painter.setPen(Qt.PenStyle.NoPen if not (self.selected or self.overlay) else self._state_pen())
            painter.setBrush(fill)
            painter.drawRect(r)
            return
        if self.match:
            painter.setPen(QPen(theme.MATCH, 6))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(r.adjusted(-3, -3, 3, 3), 7, 7)
        painter.setPen(self._state_pen() if (self.selected or self.overlay) else pen)
        painter.setBrush(fill)
        painter.drawRoundedRect(r, 5, 5)
        if self.view_item.is_group:   # a second outline: a stack of boxes
            painter.setPen(QPen(self._border, 0.8))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(r.adjusted(3, 3, -3, -3), 4, 4)
        if ghost:
            text = theme.REMOVED
        painter.setPen(text)
        y = r.top() + PAD_Y
        for i, line in enumerate(self.view_item.lines):
            font = _TITLE if i == 0 else _BODY
            painter.setFont(font)
            painter.drawText(QRectF(r.left() + 6, y, r.width() - 12, LINE_H),
                             Qt.AlignmentFlag.AlignCenter, line)
            y += LINE_H
        if self._is_fallback:
            self._paint_badge(painter)
        if self.preflight:
            self._paint_preflight(painter)
        if self.patches:
            self._paint_patches(painter)
        if self.patch_grid:
            self._paint_grid(painter)

    def set_patches(self, patches: int, grid: tuple[int, int] | None) -> None:
        if (patches, grid) != (self.patches, self.patch_grid):
            self.patches, self.patch_grid = patches, grid
            self.update()

    def _paint_patches(self, painter: QPainter) -> None:
        """Runs per patch: a teal double outline and a "×N" badge on the bottom-right corner."""
        painter.setPen(QPen(theme.PATCHED, 2.4))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(self.rect.adjusted(-3, -3, 3, 3), 7, 7)
        text = f"×{self.patches}"
        w = QFontMetricsF(_SMALL).horizontalAdvance(text) + 8
        badge = QRectF(self.rect.right() - w + 6, self.rect.bottom() - 7, w, 13)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.PATCHED)
        painter.drawRoundedRect(badge, 6, 6)
        painter.setPen(QColor("#ffffff"))
        painter.setFont(_SMALL)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_grid(self, painter: QPainter) -> None:
        """The schedule's patch grid on the input: P×Q cells over the box (each patch reads its cell and the
        halo its receptive field needs)."""
        assert self.patch_grid is not None
        rows, cols = self.patch_grid
        r = self.rect.adjusted(2, 2, -2, -2)
        painter.setPen(QPen(theme.PATCHED, 1.2, Qt.PenStyle.DashLine))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(r)
        for i in range(1, rows):
            y = r.top() + r.height() * i / rows
            painter.drawLine(QPointF(r.left(), y), QPointF(r.right(), y))
        for j in range(1, cols):
            x = r.left() + r.width() * j / cols
            painter.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()))

    def _state_pen(self) -> QPen:
        if self.selected:
            return QPen(theme.SELECTED, 3.2)
        color = {"added": theme.ADDED, "removed": theme.REMOVED, "rewritten": theme.REWRITTEN,
                 "modified": theme.REWRITTEN}.get(self.overlay, self._border)
        pen = QPen(color, 2.6)
        if self.overlay in ("removed", "modified"):
            pen.setStyle(Qt.PenStyle.DashLine)
        return pen

    def _paint_badge(self, painter: QPainter) -> None:
        """A yellow warning triangle on the top-right corner."""
        cx, cy = self.rect.right() - 2, self.rect.top() - 1
        path = _warning_path(cx, cy, 8)
        painter.setPen(QPen(QColor("#5d4037"), 1))
        painter.setBrush(QColor("#ffca28"))
        painter.drawPath(path)
        painter.setPen(QColor("#3e2723"))
        painter.setFont(_SMALL)
        painter.drawText(QRectF(cx - 6, cy - 5, 12, 13), Qt.AlignmentFlag.AlignCenter, "!")


    def _paint_preflight(self, painter: QPainter) -> None:
        """A stop sign on the top-left corner: red when the pre-flight is certain the target fails
        here, orange when it may."""
        cx, cy = self.rect.left() + 2, self.rect.top() - 1
        certain = self.preflight == "will fail"
        painter.setPen(QPen(QColor("#ffffff"), 1.2))
        painter.setBrush(theme.PREFLIGHT["will fail" if certain else "may fail"])
        painter.drawEllipse(QPointF(cx, cy), 8, 8)
        painter.setPen(QColor("#ffffff"))
        painter.setFont(_SMALL)
        painter.drawText(QRectF(cx - 7, cy - 7, 14, 14), Qt.AlignmentFlag.AlignCenter, "✕" if certain else "?")


class ClusterItem(QGraphicsItem):
    """An expanded nn.Module group: a tinted box with its path; click the header to collapse."""

    HEADER = 16.0

    def __init__(self, cluster: ViewCluster, rect: QRectF) -> None:
        super().__init__()
        self.cluster = cluster
        self.rect = QRectF(0, 0, rect.width(), rect.height())
        self.setPos(rect.topLeft())
        self.setZValue(-10 + cluster.depth * 0.1)
        self._fill = QColor(theme.CLUSTER_FILLS[min(cluster.depth, len(theme.CLUSTER_FILLS) - 1)])

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        return self.rect

    def header_rect(self) -> QRectF:
        return QRectF(self.pos().x(), self.pos().y(), self.rect.width(), self.HEADER + 4)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        lod = _lod(painter, option)
        has_fb = self.cluster.fallbacks > 0
        painter.setPen(QPen(QColor("#e57373") if has_fb else theme.CLUSTER_BORDER, 1.4 if has_fb else 1))
        painter.setBrush(self._fill)
        painter.drawRoundedRect(self.rect, 6, 6)
        if lod < TEXT_LOD:
            return
        painter.setFont(_CLUSTER)
        painter.setPen(QColor("#37474f"))
        label = "▾ " + self.cluster.label
        fm = QFontMetricsF(_CLUSTER)
        room = self.rect.width() - 12 - (34 if has_fb else 0)
        text = fm.elidedText(label, Qt.TextElideMode.ElideMiddle, room)
        painter.drawText(QRectF(6, 3, room, self.HEADER),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        if has_fb:                      # a fallback inside: warning triangle + count
            x = 6 + fm.horizontalAdvance(text) + 12
            painter.setPen(QPen(QColor("#5d4037"), 0.8))
            painter.setBrush(QColor("#ffca28"))
            painter.drawPath(_warning_path(x, 3 + self.HEADER / 2, 6))
            painter.setPen(QColor("#b71c1c"))
            painter.drawText(QRectF(x + 9, 3, 30, self.HEADER),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             str(self.cluster.fallbacks))


class EdgeItem(QGraphicsItem):
    """A dot spline with an arrow head and, when zoomed in, its tensor's dtype/shape."""

    def __init__(self, route: EdgeRoute, label: str, qlabel: str = "", tip: str = "") -> None:
        super().__init__()
        self.route = route
        self.label = label
        self.qlabel = qlabel
        self.tip = tip
        self.show_qparams = False
        self.highlight = False
        self.setZValue(0)
        pts = [QPointF(x, y) for x, y in route.points]
        path = QPainterPath(pts[0]) if pts else QPainterPath()
        for i in range(1, len(pts) - 2, 3):
            path.cubicTo(pts[i], pts[i + 1], pts[i + 2])
        self.path = path
        self.arrow = QPolygonF()
        if route.arrow is not None and pts:
            tip_pt = QPointF(*route.arrow)
            self.arrow = _arrow_head(pts[-1], tip_pt)
        mid = path.pointAtPercent(0.5) if pts else QPointF()
        self.label_pos = mid
        self._bounds = path.boundingRect().united(self.arrow.boundingRect()).adjusted(-4, -4, 4, 4)
        if label:
            w = QFontMetricsF(_SMALL).horizontalAdvance(f"{label}  {qlabel}") + 14
            self._bounds = self._bounds.united(QRectF(mid.x(), mid.y() - 9, w, 18))

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        return self._bounds

    def shape(self) -> QPainterPath:
        return self.path

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        lod = _lod(painter, option)
        color = theme.SELECTED if self.highlight else theme.EDGE
        painter.setPen(QPen(color, 2.2 if self.highlight else 1.1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path)
        if not self.arrow.isEmpty():
            painter.setBrush(color)
            painter.drawPolygon(self.arrow)
        if lod < EDGE_LABEL_LOD or not self.label:
            return
        painter.setFont(_SMALL)
        text = self.label + (f"  {self.qlabel}" if self.show_qparams and self.qlabel else "")
        fm = QFontMetricsF(_SMALL)
        w = fm.horizontalAdvance(text) + 6
        box = QRectF(self.label_pos.x() + 4, self.label_pos.y() - 7, w, 14)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(255, 255, 255, 215))
        painter.drawRoundedRect(box, 3, 3)
        painter.setPen(theme.EDGE_LABEL if not self.show_qparams else QColor("#4527a0"))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)


def _arrow_head(base: QPointF, tip: QPointF) -> QPolygonF:
    d = tip - base
    length = max((d.x() ** 2 + d.y() ** 2) ** 0.5, 1e-6)
    ux, uy = d.x() / length, d.y() / length
    w = 3.5
    left = QPointF(base.x() - uy * w, base.y() + ux * w)
    right = QPointF(base.x() + uy * w, base.y() - ux * w)
    return QPolygonF([tip, left, right])

