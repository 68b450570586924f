"""QGraphicsView for a GraphScene: zoom around the cursor, pan by dragging, fit, centre on a
node, tooltips from the scene, a minimap overlay for graphs bigger than the viewport."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QHelpEvent, QImage, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import QFrame, QGraphicsView, QToolTip, QWidget

from app.graph.scene import GraphScene

if TYPE_CHECKING:
    from app.widgets.legend import HeatLegend, Legend

MIN_SCALE, MAX_SCALE = 0.02, 4.0


class GraphView(QGraphicsView):
    """Signals:
        nodeClicked(str): a node box was clicked (snapshot node id).
        backgroundClicked(): empty space was clicked.
        groupActivated(str): a collapsed group was double-clicked (module path): expand it.
        clusterToggled(str): a cluster header was clicked (module path): collapse it.
        viewChanged(): zoom or scroll changed (the minimap listens).
    """

    legend: Legend              # set by the graph toolbar (absent until then: read with getattr)
    heat_legend: HeatLegend
    nodeClicked = Signal(str)
    backgroundClicked = Signal()
    groupActivated = Signal(str)
    clusterToggled = Signal(str)
    viewChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setMouseTracking(True)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setBackgroundBrush(QColor("#ffffff"))
        self._press: QPoint | None = None
        self.minimap = Minimap(self)
        self.horizontalScrollBar().valueChanged.connect(self.viewChanged)
        self.verticalScrollBar().valueChanged.connect(self.viewChanged)
        self.viewChanged.connect(self.minimap.update)

    def graph_scene(self) -> GraphScene | None:
        s = self.scene()
        return s if isinstance(s, GraphScene) else None

    def set_graph_scene(self, scene: GraphScene | None, *, keep_view: bool = False) -> None:
        old_center = self.mapToScene(self.viewport().rect().center())
        self.setScene(scene)
        self.minimap.set_scene(scene)
        if scene is not None and keep_view:
            self.centerOn(old_center)
        self.viewChanged.emit()

    # ------------------------------------------------------------------ zoom / pan
    def zoom_factor(self) -> float:
        return self.transform().m11()

    def zoom(self, factor: float, *, under_mouse: bool = False) -> None:
        """Zoom by `factor` around the cursor (wheel) or the view centre (buttons, keys)."""
        cur = self.zoom_factor()
        factor = max(MIN_SCALE / cur, min(MAX_SCALE / cur, factor))
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse if under_mouse
                                     else QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.scale(factor, factor)
        self.viewChanged.emit()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt API
        dy = event.angleDelta().y()
        if dy == 0:
            return super().wheelEvent(event)
        self.zoom(1.0015 ** dy, under_mouse=True)

    def fit(self) -> None:
        s = self.scene()
        if s is None:
            return
        self.resetTransform()
        self.fitInView(s.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom_factor() > 1.0:          # small graphs: natural size, centred
            self.resetTransform()
            self.centerOn(s.sceneRect().center())
        self.viewChanged.emit()

    def fit_width(self) -> None:
        """Fit the graph's width (tall graphs stay readable), top of the graph in view."""
        s = self.scene()
        if s is None:
            return
        r = s.sceneRect()
        self.resetTransform()
        k = min(1.0, max(0.25, (self.viewport().width() - 10) / max(r.width(), 1)))
        self.scale(k, k)
        self.centerOn(QPointF(r.center().x(), r.top() + self.viewport().height() / (2 * k)))
        self.viewChanged.emit()

    def center_on_rect(self, rect: QRectF, min_zoom: float = 0.6) -> None:
        if self.zoom_factor() < min_zoom:
            f = min_zoom / self.zoom_factor()
            self.scale(f, f)
        self.centerOn(rect.center())
        self.viewChanged.emit()

    # ------------------------------------------------------------------ mouse
    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        self._press = event.position().toPoint()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        super().mouseReleaseEvent(event)
        press, self._press = self._press, None
        if press is None or event.button() != Qt.MouseButton.LeftButton:
            return
        if (event.position().toPoint() - press).manhattanLength() > 4:
            return                             # it was a drag (pan)
        scene = self.graph_scene()
        if scene is None:
            return
        pos = self.mapToScene(event.position().toPoint())
        box = scene.box_at(pos)
        if box is not None:
            if not box.view_item.is_group:
                self.nodeClicked.emit(box.view_item.id)
            return
        header = scene.cluster_header_at(pos)
        if header is not None:
            self.clusterToggled.emit(header.cluster.path)
            return
        self.backgroundClicked.emit()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        scene = self.graph_scene()
        if scene is not None:
            box = scene.box_at(self.mapToScene(event.position().toPoint()))
            if box is not None and box.view_item.is_group:
                self.groupActivated.emit(box.view_item.module_path)
                return
        super().mouseDoubleClickEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.ToolTip:
            help_event = cast(QHelpEvent, event)
            scene = self.graph_scene()
            text = scene.tooltip_at(self.mapToScene(help_event.pos())) if scene else ""
            if text:
                QToolTip.showText(help_event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self.minimap.reposition()
        for name in ("legend", "heat_legend"):
            overlay = getattr(self, name, None)
            if overlay is not None:
                overlay.reposition()
        self.viewChanged.emit()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt API
        super().scrollContentsBy(dx, dy)
        self.minimap.update()


class Minimap(QWidget):
    """An overview of the whole graph with the visible area; click or drag to move there.
    Shown only when the graph does not fit the viewport. Renders the scene once per scene."""

    SIZE = 170

    def __init__(self, view: GraphView) -> None:
        super().__init__(view)
        self._view = view
        self._image: QImage | None = None
        self._scene: GraphScene | None = None
        self._rect = QRectF()
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        self.hide()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(30)
        self._timer.timeout.connect(self._render)

    def set_scene(self, scene: GraphScene | None) -> None:
        self._scene = scene
        self._image = None
        self._timer.start()

    def _render(self) -> None:
        s = self._scene
        if s is None:
            self.hide()
            return
        r = s.sceneRect()
        k = self.SIZE / max(r.width(), r.height(), 1)
        w, h = max(20, int(r.width() * k)), max(20, int(r.height() * k))
        img = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(QColor(255, 255, 255, 235))
        p = QPainter(img)
        s.render(p, QRectF(0, 0, w, h), r)
        p.end()
        self._image = img
        self._rect = r
        self.resize(w + 2, h + 2)
        self.reposition()
        self.update()

    def reposition(self) -> None:
        vp = self._view.viewport()
        self.move(vp.width() - self.width() - 12, vp.height() - self.height() - 12)

    def _needed(self) -> bool:
        v = self._view
        if self._scene is None or self._image is None:
            return False
        vis = v.mapToScene(v.viewport().rect()).boundingRect()
        return not vis.contains(self._rect.adjusted(20, 20, -20, -20))

    def update(self, *args: Any) -> None:   # also decides visibility
        show = self._needed()
        if show != self.isVisible():
            self.setVisible(show)
        super().update(*args)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        if self._image is None:
            return
        p = QPainter(self)
        p.drawImage(1, 1, self._image)
        p.setPen(QPen(QColor("#90a4ae"), 1))
        p.drawRect(0, 0, self.width() - 1, self.height() - 1)
        v = self._view
        vis = v.mapToScene(v.viewport().rect()).boundingRect()
        k = self._image.width() / max(self._rect.width(), 1)
        box = QRectF((vis.left() - self._rect.left()) * k + 1, (vis.top() - self._rect.top()) * k + 1,
                     vis.width() * k, vis.height() * k)
        p.setPen(QPen(QColor("#1565c0"), 1.5))
        p.setBrush(QColor(21, 101, 192, 40))
        p.drawRect(box.intersected(QRectF(0, 0, self.width(), self.height())))
        p.end()

    def _go(self, pos: QPointF) -> None:
        if self._image is None:
            return
        k = self._image.width() / max(self._rect.width(), 1)
        self._view.centerOn(QPointF(self._rect.left() + (pos.x() - 1) / k,
                                    self._rect.top() + (pos.y() - 1) / k))
        self._view.viewChanged.emit()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        self._go(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event.position())
